import Contracts
import Foundation
import Messaging
import Postgres
import ServiceKit

/// Puts every event that names its `recipients` into those users' feeds, in the inbox transaction, so that an event
/// delivered twice makes one entry. It knows no flow: any event of the producers below that concerns users is an
/// entry of the type it was published as. A person who deleted their account is purged from every feed.
enum FeedConsumer {
    /// The services whose events may concern users.
    static let producers = ["matching", "chat"]

    static var handlers: EventHandlers {
        var handlers = EventHandlers()
        for producer in producers {
            handlers.onEveryEvent(from: producer) { events, connection in
                // Typing hints go to a conversation's members, so notifications keeps who they are. (Harmless to
                // repeat: a conversation once closed stays closed.)
                for event in events where event.type == ConversationOpened.type || event.type == ConversationClosed.type
                {
                    let conversation = try JSONDecoder().decode(Conversation.self, from: event.body)
                    try FeedPostgresRepository.setConversation(
                        conversation.conversationId, members: conversation.memberIds,
                        isOpen: event.type == ConversationOpened.type, on: connection)
                }
                return try appendToFeeds(events)
            }
        }
        handlers.on(UserDeleted.self, from: "accounts") { event, connection in
            try FeedPostgresRepository.erase(event, on: connection)
        }
        // Nobody is pushed anything about a person they blocked or who blocked them, or about a suspended person.
        handlers.on(UserBlocked.self, from: "accounts") { event, connection in
            try FeedPostgresRepository.setBlock(
                blocker: event.blockerId, blocked: event.blockedId, isBlocked: true, version: event.version,
                on: connection)
        }
        handlers.on(UserUnblocked.self, from: "accounts") { event, connection in
            try FeedPostgresRepository.setBlock(
                blocker: event.blockerId, blocked: event.blockedId, isBlocked: false, version: event.version,
                on: connection)
        }
        handlers.on(UserSuspended.self, from: "accounts") { event, connection in
            try FeedPostgresRepository.suspend(event.userId, on: connection)
        }
        return handlers
    }

    /// What `conversation.opened` and `conversation.closed` say of who may send typing hints to whom.
    private struct Conversation: Decodable {
        var conversationId: UUID
        var memberIds: [UUID]
    }

    /// The part of any event that says whom it concerns.
    private struct Addressed: Decodable {
        var recipients: [UUID]?
    }

    /// The statement that records the events in the inbox and appends one entry per recipient of each event new to
    /// it, in the events' order, its data the event without `recipients`; and the frames that bring the entries to the
    /// recipients' sockets once committed. An event that names none only goes into the inbox. A body that is no JSON
    /// object throws, so that the message is dead-lettered.
    static func appendToFeeds(_ events: [ReceivedEvent]) throws -> FinalStatement {
        var entries: [FeedPostgresRepository.NewEntry] = []
        for event in events {
            // NB: a body that is no UTF-8 is JSONDecoder's to refuse.
            let text = String(validating: event.body, as: UTF8.self)
            let recipients =
                try text.flatMap(Recipients.scan)
                ?? JSONDecoder().decode(Addressed.self, from: event.body).recipients ?? []
            let json = text ?? String(decoding: event.body, as: UTF8.self)
            var seen = Set<UUID>()
            for userId in recipients where seen.insert(userId).inserted {
                entries.append(.init(userId: userId, type: event.type, eventJSON: json, messageId: event.messageId))
            }
        }
        return FinalStatement(FeedPostgresRepository.append(entries, recording: events)) { rows in
            try FeedPostgresRepository.appended(rows).map { entry in
                LiveMessage(
                    exchange: FeedRouting.liveExchange, routingKey: FeedRouting.liveKey(entry.userId),
                    body: Data(entry.frame.utf8))
            }
        }
    }
}
