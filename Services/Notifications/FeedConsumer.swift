import Contracts
import Foundation
import Messaging
import Postgres
import ServiceKit

/// Puts every event that names its `recipients` into those users' feeds, in the inbox transaction, so that an event
/// delivered twice makes one entry. It knows no flow: any event of the producers below that concerns users is an
/// entry of the type it was published as.
enum FeedConsumer {
    /// The services whose events may concern users.
    static let producers = ["matching", "chat"]

    static var handlers: EventHandlers {
        var handlers = EventHandlers()
        for producer in producers {
            handlers.onEveryEvent(from: producer) { type, body, connection in
                try appendToFeeds(type: type, body: body, on: connection)
            }
        }
        // Typing hints go to a conversation's members, so notifications keeps who they are.
        handlers.on(ConversationOpened.self, from: "chat") { event, connection in
            try FeedPostgresRepository.setConversation(
                event.conversationId, members: event.memberIds, isOpen: true, on: connection)
            try appendToFeeds(
                type: ConversationOpened.type, body: try ServiceJSON.encoder.encode(event), on: connection)
        }
        handlers.on(ConversationClosed.self, from: "chat") { event, connection in
            try FeedPostgresRepository.setConversation(
                event.conversationId, members: event.memberIds, isOpen: false, on: connection)
            try appendToFeeds(
                type: ConversationClosed.type, body: try ServiceJSON.encoder.encode(event), on: connection)
        }
        return handlers
    }

    /// The part of any event that says whom it concerns.
    private struct Addressed: Decodable {
        var recipients: [UUID]?
    }

    /// One entry per recipient, its data the event without `recipients`; an event that names none changes nothing.
    /// A body that is no JSON object throws, so that the message is dead-lettered.
    static func appendToFeeds(type: String, body: Data, on connection: PostgresConnection) throws {
        guard let recipients = try JSONDecoder().decode(Addressed.self, from: body).recipients, !recipients.isEmpty
        else {
            return
        }
        let data: String = try connection.query(
            "SELECT (\(JSONText(raw: String(decoding: body, as: UTF8.self)))::jsonb - 'recipients')::text AS data"
        ).first!.decode("data")
        for userId in Set(recipients) {
            try FeedPostgresRepository.append(to: userId, type: type, dataJSON: data, on: connection)
        }
    }
}
