import Contracts
import Foundation
import Hummingbird
import Logging
import Messaging
import PlaceCatalog
import Postgres
import ServiceKit

/// The places server's part of the system: what it publishes, its routes (places, and routes along the streets). It
/// handles no other service's events.
func buildApplication(_ configuration: ServiceConfiguration, logger: Logger) async throws -> some ApplicationProtocol {
    let builder = try await ServiceBuilder(
        configuration, logger: logger, migrations: [PlacePostgresRepository.migrations],
        topology: Topology(service: "places", publishes: [PlaceUpserted.type, PlaceRetired.type]), bundle: .module)
    let campuses = try CampusDirectory.load(extraFile: configuration.campusesFile)
    let verifier = try await builder.accessTokenVerifier()
    PlaceController(repository: PlacePostgresRepository(database: builder.database), campuses: campuses)
        .addRoutes(to: builder.router, verifier: verifier)
    RouteController(repository: RoutePostgresRepository(database: builder.database), campuses: campuses)
        .addRoutes(to: builder.router, verifier: verifier)
    return try builder.build()
}
