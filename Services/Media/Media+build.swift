import Contracts
import Foundation
import Hummingbird
import Logging
import MediaImaging
import MediaStorage
import Messaging
import ServiceKit

/// Media's part of the system: its tables, the events it publishes and handles, the image store and its routes.
func buildApplication(_ configuration: ServiceConfiguration, logger: Logger) async throws -> some ApplicationProtocol {
    var configuration = configuration
    // An image is the one body larger than the services' default limit.
    if configuration.environment["MAX_BODY_BYTES"] == nil { configuration.maxBodyBytes = ImageLimits().maxBytes }
    let builder = try await ServiceBuilder(
        configuration, logger: logger, migrations: [MediaLibrary.migrations],
        topology: Topology(
            service: "media", publishes: [MediaStored.type, MediaDeleted.type],
            handlers: AccountEventsConsumer.handlers),
        bundle: .module)
    let library = MediaLibrary(
        repository: MediaPostgresRepository(database: builder.database),
        store: PostgresImageStore(database: builder.database))
    MediaController(library: library).addRoutes(to: builder.router, verifier: try await builder.accessTokenVerifier())
    return try builder.build()
}
