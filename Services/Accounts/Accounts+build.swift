import Foundation
import Hummingbird
import Logging
import Messaging
import NIOPosix
import Postgres
import ServiceKit

/// Creates and wires everything accounts runs: database, relay, controller, router; migrations run first.
func buildApplication(_ configuration: ServiceConfiguration, logger: Logger) async throws -> some ApplicationProtocol {
    let settings = try AccountSettings(configuration)
    let database = try await openDatabase(
        configuration, migrations: Bundle.module.url(forResource: "Migrations", withExtension: nil)!, logger: logger)
    let campuses = try CampusDirectory.load(extraFile: configuration.campusesFile)
    let repository = AccountPostgresRepository(database: database)
    try await repository.syncCampuses(campuses.all)

    let brokerStatus = BrokerStatus()
    let relay = OutboxRelay(
        service: "accounts", topology: .tarrare, postgresURL: configuration.postgresURL,
        amqpURL: configuration.amqpURL, status: brokerStatus, logger: logger)
    let hashingThreads = NIOThreadPool(numberOfThreads: 2)
    hashingThreads.start()
    let tokens = try await TokenIssuer(
        privateKeyPEM: settings.privateKeyPEM, issuer: configuration.jwtIssuer, audience: configuration.jwtAudience,
        accessTokenLifetime: settings.accessTokenLifetime, refreshTokenLifetime: settings.refreshTokenLifetime)
    let controller = AccountController(
        repository: repository, campuses: campuses, hasher: try PasswordHasher(cost: settings.bcryptCost, threads: hashingThreads),
        tokens: tokens, mailer: LogMailer(logger: logger), settings: settings)

    let metrics = MetricsRegistry(service: "accounts")
    let openAPI = try String(contentsOf: Bundle.module.url(forResource: "openapi", withExtension: "yaml")!, encoding: .utf8)
    let router = makeServiceRouter(
        configuration: configuration, database: database, brokerStatus: brokerStatus, metrics: metrics, openAPI: openAPI)
    controller.addRoutes(to: router)
    try checkDescription(of: router, against: openAPI, logger: logger)

    var app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "accounts"),
        logger: logger)
    app.addServices(database, relay)
    return app
}
