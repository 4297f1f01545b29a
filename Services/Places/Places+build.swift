import Contracts
import Foundation
import Hummingbird
import Logging
import Messaging
import Postgres
import ServiceKit

/// The places server's part of the system: what it publishes, its routes. It handles no other service's events.
func buildApplication(_ configuration: ServiceConfiguration, logger: Logger) async throws -> some ApplicationProtocol {
    let builder = try await ServiceBuilder(
        configuration, logger: logger, migrations: [migrations],
        topology: Topology(service: "places", publishes: [PlaceUpserted.type, PlaceRetired.type]), bundle: .module)
    PlaceController(
        repository: PlacePostgresRepository(database: builder.database),
        campuses: try CampusDirectory.load(extraFile: configuration.campusesFile)
    ).addRoutes(to: builder.router, verifier: try await builder.accessTokenVerifier())
    return try builder.build()
}

/// Places' own migrations, after the outbox and inbox.
let migrations = Bundle.module.url(forResource: "Migrations", withExtension: nil)!

/// `places import FILE [--campus DOMAIN]`: imports, prints progress and the summary. The relay of a running
/// server publishes the events the import wrote to the outbox.
func runImport(arguments: [String], _ configuration: ServiceConfiguration, logger: Logger) async throws {
    guard let file = arguments.first else {
        print("usage: places import FILE [--campus DOMAIN]")
        exit(2)
    }
    let campuses = try CampusDirectory.load(extraFile: configuration.campusesFile)
    var campus: Campus?
    if let index = arguments.firstIndex(of: "--campus") {
        guard index + 1 < arguments.count, let named = campuses.campus(forDomain: arguments[index + 1]) else {
            print("error: --campus needs one of: \(campuses.all.map(\.domain).joined(separator: ", "))")
            exit(2)
        }
        campus = named
    }
    let database = try await openDatabase(configuration, migrations: migrations, logger: logger)
    let importer = PlaceImporter(repository: PlacePostgresRepository(database: database), campuses: campuses)
    let start = ContinuousClock.now
    do {
        let summary = try await importer.importGeoJSON(
            try Data(contentsOf: URL(fileURLWithPath: file)), campus: campus, progress: { print($0) })
        print("imported \(file) in \(ContinuousClock.now - start)\n\(summary)")
    } catch let error as GeoJSONError {
        print("error: \(file) is not usable GeoJSON: \(error)")
        exit(1)
    }
    try await database.close()
}
