import Contracts
import Messaging

/// Keeps matching's read models of places and users from their services' events; an event older than what is
/// held changes nothing.
enum ReadModelConsumer {
    static var handlers: EventHandlers {
        var handlers = EventHandlers()
        handlers.on(PlaceUpserted.self) { event, connection in
            try DeliveryPostgresRepository.applyPlace(event.place, version: event.version, isRetired: false, on: connection)
        }
        handlers.on(PlaceRetired.self) { event, connection in
            try DeliveryPostgresRepository.retirePlace(event, on: connection)
        }
        handlers.on(UserRegistered.self) { event, connection in
            try DeliveryPostgresRepository.applyUser(event.user, version: event.version, on: connection)
        }
        handlers.on(UserUpdated.self) { event, connection in
            try DeliveryPostgresRepository.applyUser(event.user, version: event.version, on: connection)
        }
        return handlers
    }
}
