import Contracts
import Foundation
import Messaging
import Postgres

/// Chat's data in its own PostgreSQL database: the only file with SQL.
struct ConversationPostgresRepository: Sendable {
    let database: PostgresPool

    /// The caller's open conversations, most recently active first.
    func openConversations(of userId: UUID) async throws -> [ConversationSummary] {
        try await database.query(
            """
            SELECT c.id, c.status = 'open' AS open,
                CASE WHEN c.orderer_id = \(userId) THEN c.deliverer_id ELSE c.orderer_id END AS other_id,
                CASE WHEN c.orderer_id = \(userId) THEN coalesce(du.name, c.deliverer_name)
                     ELSE coalesce(ou.name, c.orderer_name) END AS other_name,
                last.id AS last_id, last.sender_id AS last_sender, last.text AS last_text, last.sent_at AS last_sent_at,
                (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id AND m.sender_id <> \(userId)
                    AND m.seq > coalesce((SELECT r.last_read_seq FROM read_markers r
                        WHERE r.conversation_id = c.id AND r.user_id = \(userId)), 0)) AS unread
            FROM conversations c
            LEFT JOIN users ou ON ou.id = c.orderer_id LEFT JOIN users du ON du.id = c.deliverer_id
            LEFT JOIN LATERAL (SELECT * FROM messages m WHERE m.conversation_id = c.id ORDER BY m.seq DESC LIMIT 1) last ON true
            WHERE c.status = 'open' AND (c.orderer_id = \(userId) OR c.deliverer_id = \(userId))
            ORDER BY coalesce(last.sent_at, c.opened_at) DESC
            """
        ).map { row in
            let id: UUID = try row.decode("id")
            let lastId: UUID? = try row.decode("last_id")
            return ConversationSummary(
                id: id, matchId: id, isOpen: try row.decode("open"),
                otherMember: .init(id: try row.decode("other_id"), name: try row.decode("other_name")),
                lastMessage: try lastId.map {
                    Message(
                        id: $0, conversationId: id, senderId: try row.decode("last_sender"), text: try row.decode("last_text"),
                        sentAt: try row.decode("last_sent_at"))
                },
                unreadCount: try row.decode("unread"))
        }
    }

    /// History newest first: up to `limit` messages sent before the message `before`. Members only, closed or not.
    func messages(conversationId: UUID, of userId: UUID, before: UUID?, limit: Int) async throws -> [Message] {
        try await database.transaction { connection in
            guard try Self.membership(conversationId, userId, on: connection) != nil else { throw ChatError.notFound }
            return try connection.query(
                """
                SELECT id, conversation_id, sender_id, text, sent_at FROM messages
                WHERE conversation_id = \(conversationId)
                  AND (\(before)::uuid IS NULL OR seq < (SELECT seq FROM messages WHERE id = \(before) AND conversation_id = \(conversationId)))
                ORDER BY seq DESC LIMIT \(limit)
                """
            ).map(Message.init)
        }
    }

    /// Sends a message, or returns the one already sent with this id by this sender. The second value says
    /// whether it was new.
    func send(id: UUID, conversationId: UUID, sender: UUID, senderName: String, text: String) async throws -> (Message, Bool) {
        try await database.transaction { connection in
            guard let membership = try Self.membership(conversationId, sender, on: connection, lock: true) else {
                throw ChatError.notFound
            }
            if let existing = try connection.query(
                "SELECT id, conversation_id, sender_id, text, sent_at FROM messages WHERE id = \(id)"
            ).first.map(Message.init) {
                guard existing.senderId == sender, existing.conversationId == conversationId else { throw ChatError.idTaken }
                return (existing, false)
            }
            guard membership.isOpen else { throw ChatError.closed }
            let row = try connection.query(
                """
                INSERT INTO messages (id, conversation_id, sender_id, text) VALUES (\(id), \(conversationId), \(sender), \(text))
                RETURNING seq, id, conversation_id, sender_id, text, sent_at
                """
            ).first!
            let message = try Message(row: row)
            try Self.markRead(conversationId, userId: sender, throughSeq: try row.decode("seq"), on: connection)
            try Outbox.append(
                MessageSent(
                    messageId: id, conversationId: conversationId, senderId: sender, senderName: senderName,
                    recipientId: membership.otherMember, text: text, sentAt: message.sentAt), on: connection)
            return (message, true)
        }
    }

    /// Moves the caller's read marker up to `messageId` (never back).
    func markRead(conversationId: UUID, userId: UUID, messageId: UUID) async throws {
        try await database.transaction { connection in
            guard try Self.membership(conversationId, userId, on: connection) != nil else { throw ChatError.notFound }
            guard let seq: Int64 = try connection.query(
                "SELECT seq FROM messages WHERE id = \(messageId) AND conversation_id = \(conversationId)"
            ).first?.decode("seq") else {
                throw ChatError.invalid(field: "messageId", "No such message in this conversation.")
            }
            try Self.markRead(conversationId, userId: userId, throughSeq: seq, on: connection)
        }
    }

    private static func markRead(_ conversationId: UUID, userId: UUID, throughSeq seq: Int64, on connection: PostgresConnection) throws {
        try connection.query(
            """
            INSERT INTO read_markers (conversation_id, user_id, last_read_seq) VALUES (\(conversationId), \(userId), \(seq))
            ON CONFLICT (conversation_id, user_id) DO UPDATE SET last_read_seq = greatest(read_markers.last_read_seq, excluded.last_read_seq)
            """)
    }

    private struct Membership {
        var isOpen: Bool
        var otherMember: UUID
    }

    private static func membership(_ conversationId: UUID, _ userId: UUID, on connection: PostgresConnection, lock: Bool = false)
        throws -> Membership?
    {
        try connection.query(
            """
            SELECT status = 'open' AS open, CASE WHEN orderer_id = \(userId) THEN deliverer_id ELSE orderer_id END AS other
            FROM conversations WHERE id = \(conversationId) AND (orderer_id = \(userId) OR deliverer_id = \(userId))
            \(unescaped: lock ? "FOR SHARE" : "")
            """
        ).first.map { Membership(isOpen: try $0.decode("open"), otherMember: try $0.decode("other")) }
    }

    // MARK: Events from other services

    /// `match.accepted` opens the conversation; a later (closing) version already held wins.
    static func open(_ match: MatchParties, version: Int64, on connection: PostgresConnection) throws {
        let inserted = try connection.query(
            """
            INSERT INTO conversations (id, campus, orderer_id, orderer_name, deliverer_id, deliverer_name, status, version)
            VALUES (\(match.matchId), \(match.campus), \(match.ordererId), \(match.ordererName), \(match.delivererId),
                \(match.delivererName), 'open', \(version))
            ON CONFLICT (id) DO NOTHING RETURNING id
            """)
        guard !inserted.isEmpty else { return }
        try Outbox.append(
            ConversationOpened(
                conversationId: match.matchId, matchId: match.matchId, memberIds: [match.ordererId, match.delivererId],
                version: 1), on: connection)
    }

    /// `match.completed` or `match.cancelled` closes it: read-only, and gone from the list.
    static func close(_ match: MatchParties, version: Int64, on connection: PostgresConnection) throws {
        let closed = try connection.query(
            """
            INSERT INTO conversations (id, campus, orderer_id, orderer_name, deliverer_id, deliverer_name, status, closed_at, version)
            VALUES (\(match.matchId), \(match.campus), \(match.ordererId), \(match.ordererName), \(match.delivererId),
                \(match.delivererName), 'closed', now(), \(version))
            ON CONFLICT (id) DO UPDATE SET status = 'closed', closed_at = now(), version = excluded.version
            WHERE conversations.status = 'open' AND conversations.version < excluded.version
            RETURNING id
            """)
        guard !closed.isEmpty else { return }
        try Outbox.append(
            ConversationClosed(
                conversationId: match.matchId, matchId: match.matchId, memberIds: [match.ordererId, match.delivererId],
                version: 2), on: connection)
    }

    static func applyUser(_ user: UserSnapshot, version: Int64, on connection: PostgresConnection) throws {
        try connection.query(
            """
            INSERT INTO users (id, name, version) VALUES (\(user.userId), \(user.name), \(version))
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, version = excluded.version WHERE users.version < excluded.version
            """)
    }
}

extension Message {
    init(row: PostgresRow) throws {
        id = try row.decode("id")
        conversationId = try row.decode("conversation_id")
        senderId = try row.decode("sender_id")
        text = try row.decode("text")
        sentAt = try row.decode("sent_at")
    }
}
