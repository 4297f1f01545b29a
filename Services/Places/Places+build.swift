import Foundation
import Hummingbird
import Logging
import Messaging
import Postgres
import ServiceKit

/// Creates and wires what the places server runs: database, relay, controller, router; migrations run first.
func buildApplication(_ configuration: ServiceConfiguration, logger: Logger) async throws -> some ApplicationProtocol {
    guard let publicKey = configuration.jwtPublicKey else { throw ConfigurationError.missing("JWT_PUBLIC_KEY") }
    let database = try await openDatabase(configuration, migrations: migrations, logger: logger)
    let brokerStatus = BrokerStatus()
    let relay = OutboxRelay(
        service: "places", topology: .tarrare, postgresURL: configuration.postgresURL,
        amqpURL: configuration.amqpURL, status: brokerStatus, logger: logger)
    let verifier = try await AccessTokenVerifier(
        publicKeyPEM: publicKey, issuer: configuration.jwtIssuer, audience: configuration.jwtAudience)
    let controller = PlaceController(
        repository: PlacePostgresRepository(database: database),
        campuses: try CampusDirectory.load(extraFile: configuration.campusesFile))

    let openAPI = try String(contentsOf: Bundle.module.url(forResource: "openapi", withExtension: "yaml")!, encoding: .utf8)
    let router = makeServiceRouter(
        configuration: configuration, database: database, brokerStatus: brokerStatus,
        metrics: MetricsRegistry(service: "places"), openAPI: openAPI)
    controller.addRoutes(to: router, verifier: verifier)
    try checkDescription(of: router, against: openAPI, logger: logger)

    var app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "places"),
        logger: logger)
    app.addServices(database, relay)
    return app
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
