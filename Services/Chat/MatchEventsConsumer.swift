import Contracts
import Messaging

/// How chat reacts to matching's and accounts' events: a match opens and closes its conversation; names follow
/// the users' profiles.
enum MatchEventsConsumer {
    static var handlers: EventHandlers {
        var handlers = EventHandlers()
        handlers.on(MatchAccepted.self) { event, connection in
            try ConversationPostgresRepository.open(event.match, version: event.version, on: connection)
        }
        handlers.on(MatchCompleted.self) { event, connection in
            try ConversationPostgresRepository.close(event.match, version: event.version, on: connection)
        }
        handlers.on(MatchCancelled.self) { event, connection in
            try ConversationPostgresRepository.close(event.match, version: event.version, on: connection)
        }
        handlers.on(UserRegistered.self) { event, connection in
            try ConversationPostgresRepository.applyUser(event.user, version: event.version, on: connection)
        }
        handlers.on(UserUpdated.self) { event, connection in
            try ConversationPostgresRepository.applyUser(event.user, version: event.version, on: connection)
        }
        return handlers
    }
}
