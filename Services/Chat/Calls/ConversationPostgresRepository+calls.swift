import Contracts
import Foundation
import Messaging
import Postgres

extension ConversationPostgresRepository {
    /// Leaves what a call came to ("Missed call", "Call, 4 min") in its conversation while it is open: a message of
    /// the caller's with the call's id, read by them as what they write is, sent to the callee as any message is (a
    /// missed call's callee is pushed it). Once only.
    static func appendCallLine(_ text: String, of call: Call, on connection: PostgresConnection) throws {
        guard
            let sent = try connection.query(
                """
                WITH open AS (
                    SELECT me.name FROM conversations c
                    JOIN conversation_members me ON me.conversation_id = c.id AND me.user_id = \(call.callerId)
                    WHERE c.id = \(call.conversationId) AND c.status = 'open'
                ), sent AS (
                    INSERT INTO messages (id, conversation_id, sender_id, text)
                    SELECT \(call.id), \(call.conversationId), \(call.callerId), \(text) FROM open
                    ON CONFLICT (id) DO NOTHING
                    RETURNING seq, sent_at
                )
                SELECT open.name, sent.sent_at FROM open, sent
                """
            ).first
        else { return }
        try Outbox.append(
            MessageSent(
                messageId: call.id, conversationId: call.conversationId, senderId: call.callerId,
                senderName: try sent.decode("name"), recipients: [call.calleeId], text: text,
                sentAt: try sent.decode("sent_at")),
            on: connection)
    }
}
