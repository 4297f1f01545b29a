import Contracts
import Foundation
import Hummingbird
import Logging
import Messaging
import PlaceCatalog
import Postgres
import ServiceKit

/// The places server's part of the system: what it publishes, its routes. It handles no other service's events.
func buildApplication(_ configuration: ServiceConfiguration, logger: Logger) async throws -> some ApplicationProtocol {
    let builder = try await ServiceBuilder(
        configuration, logger: logger, migrations: [PlacePostgresRepository.migrations],
        topology: Topology(service: "places", publishes: [PlaceUpserted.type, PlaceRetired.type]), bundle: .module)
    PlaceController(
        repository: PlacePostgresRepository(database: builder.database),
        campuses: try CampusDirectory.load(extraFile: configuration.campusesFile)
    ).addRoutes(to: builder.router, verifier: try await builder.accessTokenVerifier())
    return try builder.build()
}
