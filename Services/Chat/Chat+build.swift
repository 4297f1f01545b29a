import Foundation
import Hummingbird
import Logging
import Messaging
import Postgres
import ServiceKit

/// Creates and wires what chat runs: database, relay, consumer of matching's and accounts' events, controller,
/// router; migrations run first.
func buildApplication(_ configuration: ServiceConfiguration, logger: Logger) async throws -> some ApplicationProtocol {
    guard let publicKey = configuration.jwtPublicKey else { throw ConfigurationError.missing("JWT_PUBLIC_KEY") }
    let database = try await openDatabase(
        configuration, migrations: Bundle.module.url(forResource: "Migrations", withExtension: nil)!, logger: logger)

    let brokerStatus = BrokerStatus()
    let relay = OutboxRelay(
        service: "chat", topology: .tarrare, postgresURL: configuration.postgresURL, amqpURL: configuration.amqpURL,
        status: brokerStatus, logger: logger)
    let consumer = EventConsumer(
        service: "chat", topology: .tarrare, handlers: MatchEventsConsumer.handlers, postgresURL: configuration.postgresURL,
        amqpURL: configuration.amqpURL, status: brokerStatus, logger: logger)
    let verifier = try await AccessTokenVerifier(
        publicKeyPEM: publicKey, issuer: configuration.jwtIssuer, audience: configuration.jwtAudience)

    let openAPI = try String(contentsOf: Bundle.module.url(forResource: "openapi", withExtension: "yaml")!, encoding: .utf8)
    let router = makeServiceRouter(
        configuration: configuration, database: database, brokerStatus: brokerStatus,
        metrics: MetricsRegistry(service: "chat"), openAPI: openAPI)
    ConversationController(repository: ConversationPostgresRepository(database: database)).addRoutes(to: router, verifier: verifier)
    try checkDescription(of: router, against: openAPI, logger: logger)

    var app = Application(
        router: router,
        configuration: .init(address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "chat"),
        logger: logger)
    app.addServices(database, relay, consumer)
    return app
}
