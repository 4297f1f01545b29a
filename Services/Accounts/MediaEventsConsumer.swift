import Contracts
import Messaging

/// How accounts reacts to media's events: it keeps whose each image is; a person whose photo is deleted has none.
enum MediaEventsConsumer {
    static var handlers: EventHandlers {
        var handlers = EventHandlers()
        handlers.on(MediaStored.self, from: "media") { event, connection in
            try AccountPostgresRepository.applyImage(
                event.mediaId, owner: event.ownerId, isDeleted: false, version: event.version, on: connection)
        }
        handlers.on(MediaDeleted.self, from: "media") { event, connection in
            try AccountPostgresRepository.applyImage(
                event.mediaId, owner: event.ownerId, isDeleted: true, version: event.version, on: connection)
            try AccountPostgresRepository.removePhoto(event.mediaId, of: event.ownerId, on: connection)
        }
        return handlers
    }
}
