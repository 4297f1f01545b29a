import Contracts
import Messaging

/// How chat reacts to other services' events: any flow's match opens and closes its conversation; names follow
/// the users' profiles; a person who deleted their account is erased.
enum MatchEventsConsumer {
    static var handlers: EventHandlers {
        var handlers = EventHandlers()
        handlers.on(MatchOpened.self, from: "matching") { event, connection in
            try ConversationPostgresRepository.open(event, on: connection)
        }
        handlers.on(MatchClosed.self, from: "matching") { event, connection in
            try ConversationPostgresRepository.close(event, on: connection)
        }
        handlers.on(UserRegistered.self, from: "accounts") { event, connection in
            try ConversationPostgresRepository.applyUser(event.user, version: event.version, on: connection)
        }
        handlers.on(UserUpdated.self, from: "accounts") { event, connection in
            try ConversationPostgresRepository.applyUser(event.user, version: event.version, on: connection)
        }
        handlers.on(UserDeleted.self, from: "accounts") { event, connection in
            try ConversationPostgresRepository.erase(event, on: connection)
        }
        return handlers
    }
}
