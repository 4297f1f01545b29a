import Contracts
import Foundation
import Messaging
import Postgres
import ServiceKit

/// Turns matching's and chat's events into entries of the concerned users' feeds, in the inbox transaction, so
/// that an event delivered twice makes one entry.
enum FeedConsumer {
    static var handlers: EventHandlers {
        var handlers = EventHandlers()
        addFeed(OfferMade.self, to: &handlers)
        addFeed(OfferDeclined.self, to: &handlers)
        addFeed(OfferExpired.self, to: &handlers)
        addFeed(OfferWithdrawn.self, to: &handlers)
        addFeed(MatchAccepted.self, to: &handlers)
        addFeed(MatchCancelled.self, to: &handlers)
        addFeed(MatchCompleted.self, to: &handlers)
        addFeed(OrderExpired.self, to: &handlers)
        addFeed(RunClosed.self, to: &handlers)
        addFeed(MessageSent.self, to: &handlers)
        addFeed(ConversationOpened.self, to: &handlers) { event, connection in
            try FeedPostgresRepository.setConversation(event.conversationId, members: event.memberIds, isOpen: true, on: connection)
        }
        addFeed(ConversationClosed.self, to: &handlers) { event, connection in
            try FeedPostgresRepository.setConversation(event.conversationId, members: event.memberIds, isOpen: false, on: connection)
        }
        return handlers
    }

    private static func addFeed<E: Event>(
        _ type: E.Type, to handlers: inout EventHandlers,
        also: (@Sendable (E, PostgresConnection) throws -> Void)? = nil
    ) {
        handlers.on(type) { event, connection in
            try also?(event, connection)
            let data = String(decoding: try ServiceJSON.encoder.encode(event), as: UTF8.self)
            for userId in FeedRouting.recipients(of: event) {
                try FeedPostgresRepository.append(to: userId, type: E.type, dataJSON: data, on: connection)
            }
        }
    }
}
