import Contracts
import MediaStorage
import Messaging

/// How media reacts to other services' events: a person who deleted their account loses every image.
enum AccountEventsConsumer {
    static var handlers: EventHandlers {
        var handlers = EventHandlers()
        handlers.on(UserDeleted.self, from: "accounts") { event, connection in
            try MediaPostgresRepository.erase(event, on: connection)
        }
        return handlers
    }
}
