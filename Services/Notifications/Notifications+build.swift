import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import Messaging
import Postgres
import ServiceKit

/// Creates and wires what notifications runs: database, relay (which also sends feed entries live), consumer
/// of matching's and chat's events, the live channel, the push dispatcher, the HTTP and WebSocket routers. Pushes
/// go to `pushSender`, the log unless given.
func buildApplication(
    _ configuration: ServiceConfiguration, logger: Logger, pushSender: (any PushSender)? = nil
) async throws -> some ApplicationProtocol {
    guard let publicKey = configuration.jwtPublicKey else { throw ConfigurationError.missing("JWT_PUBLIC_KEY") }
    let reader = EnvironmentReader(values: configuration.environment)
    let pushGrace = try reader.double("PUSH_GRACE_SECONDS", in: 0...3600) ?? 5
    let database = try await openDatabase(
        configuration, migrations: Bundle.module.url(forResource: "Migrations", withExtension: nil)!, logger: logger)

    let brokerStatus = BrokerStatus()
    let relay = OutboxRelay(
        service: "notifications", topology: .tarrare, postgresURL: configuration.postgresURL,
        amqpURL: configuration.amqpURL, status: brokerStatus, logger: logger)
    let consumer = EventConsumer(
        service: "notifications", topology: .tarrare, handlers: FeedConsumer.handlers,
        postgresURL: configuration.postgresURL, amqpURL: configuration.amqpURL, status: brokerStatus, logger: logger)
    let live = LiveChannel(
        exchange: Topology.liveExchange, topology: .tarrare, amqpURL: configuration.amqpURL, status: brokerStatus,
        logger: logger)
    let repository = FeedPostgresRepository(database: database)
    let hub = StreamHub(live: live)
    let dispatcher = PushDispatcher(
        repository: repository, sender: pushSender ?? LogPushSender(logger: logger), grace: pushGrace, logger: logger)
    let verifier = try await AccessTokenVerifier(
        publicKeyPEM: publicKey, issuer: configuration.jwtIssuer, audience: configuration.jwtAudience)
    let controller = StreamController(repository: repository, hub: hub, verifier: verifier)

    let openAPI = try String(contentsOf: Bundle.module.url(forResource: "openapi", withExtension: "yaml")!, encoding: .utf8)
    let router = makeServiceRouter(
        configuration: configuration, database: database, brokerStatus: brokerStatus,
        metrics: MetricsRegistry(service: "notifications"), openAPI: openAPI)
    controller.addRoutes(to: router)
    let streamRouter = Router(context: StreamRequestContext.self)
    controller.addStream(to: streamRouter)
    try checkDescription(of: router, against: openAPI, logger: logger)

    var app = Application(
        router: router,
        server: .http1WebSocketUpgrade(
            webSocketRouter: streamRouter, configuration: .init(ws: .init(autoPing: .enabled(timePeriod: .seconds(20))))),
        configuration: .init(
            address: .hostname(configuration.httpHost, port: configuration.httpPort), serverName: "notifications"),
        logger: logger)
    app.addServices(database, relay, consumer, live, dispatcher)
    return app
}
