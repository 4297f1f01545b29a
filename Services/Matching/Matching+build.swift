import Foundation
import Hummingbird
import Logging
import Messaging
import Postgres
import ServiceKit

/// Creates and wires what matching runs: database, relay, read-model consumer, timer scheduler, controller,
/// router; migrations run first.
func buildApplication(_ configuration: ServiceConfiguration, logger: Logger) async throws -> some ApplicationProtocol {
    guard let publicKey = configuration.jwtPublicKey else { throw ConfigurationError.missing("JWT_PUBLIC_KEY") }
    let settings = try DeliverySettings(configuration)
    let database = try await openDatabase(
        configuration, migrations: migrations, logger: logger)

    let brokerStatus = BrokerStatus()
    let relay = OutboxRelay(
        service: "matching", topology: .tarrare, postgresURL: configuration.postgresURL,
        amqpURL: configuration.amqpURL, status: brokerStatus, logger: logger)
    let consumer = EventConsumer(
        service: "matching", topology: .tarrare, handlers: ReadModelConsumer.handlers,
        postgresURL: configuration.postgresURL, amqpURL: configuration.amqpURL, status: brokerStatus, logger: logger)
    let repository = DeliveryPostgresRepository(database: database, settings: settings)
    let scheduler = TimerScheduler(
        repository: repository, interval: .milliseconds(Int(settings.schedulerInterval * 1000)), logger: logger)
    let verifier = try await AccessTokenVerifier(
        publicKeyPEM: publicKey, issuer: configuration.jwtIssuer, audience: configuration.jwtAudience)

    let openAPI = try String(contentsOf: Bundle.module.url(forResource: "openapi", withExtension: "yaml")!, encoding: .utf8)
    let router = makeServiceRouter(
        configuration: configuration, database: database, brokerStatus: brokerStatus,
        metrics: MetricsRegistry(service: "matching"), openAPI: openAPI)
    DeliveryController(repository: repository, settings: settings).addRoutes(to: router, verifier: verifier)
    try checkDescription(of: router, against: openAPI, logger: logger)

    var app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "matching"),
        logger: logger)
    app.addServices(database, relay, consumer, scheduler)
    return app
}

/// Matching's own migrations, after the outbox and inbox.
let migrations = Bundle.module.url(forResource: "Migrations", withExtension: nil)!

extension DeliverySettings {
    init(_ configuration: ServiceConfiguration) throws {
        let reader = EnvironmentReader(values: configuration.environment)
        self.init()
        offerWindow = try reader.double("OFFER_WINDOW_SECONDS", in: 1...600) ?? offerWindow
        defaultRunMinutes = try reader.integer("RUN_DEFAULT_MINUTES", in: 1...600) ?? defaultRunMinutes
        orderLifetime = try reader.double("ORDER_LIFETIME_SECONDS", in: 1...86_400) ?? orderLifetime
        matchRadiusMeters = try reader.double("MATCH_RADIUS_METERS", in: 1...10_000) ?? matchRadiusMeters
        schedulerInterval = try reader.double("SCHEDULER_INTERVAL_SECONDS", in: 0.05...60) ?? schedulerInterval
    }
}
