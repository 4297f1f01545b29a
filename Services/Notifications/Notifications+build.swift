import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import Messaging
import ServiceKit

/// Notifications' part of the system: the feeds it fills from events that name their recipients, the live channel
/// (on which its consumer publishes each entry once committed), the push dispatcher and the devices it pushes to, the
/// HTTP and WebSocket routes. Pushes go to `pushSender` when given (tests), else to each device's push service: Web
/// Push with the VAPID key of `VAPID_PRIVATE_KEY` (or `_FILE`, a P-256 key in PEM) and `VAPID_SUBJECT`.
func buildApplication(
    _ configuration: ServiceConfiguration, logger: Logger, pushSender: (any PushSender)? = nil
) async throws -> some ApplicationProtocol {
    let reader = EnvironmentReader(values: configuration.environment)
    let pushGrace = try reader.double("PUSH_GRACE_SECONDS", in: 0...3600) ?? 5
    var vapid: VAPIDIdentity? = nil
    if let pem = try reader.fileOrValue("VAPID_PRIVATE_KEY") {
        let subject = reader.string("VAPID_SUBJECT") ?? "mailto:push@tarrare.invalid"
        guard subject.hasPrefix("mailto:") || subject.hasPrefix("https:") else {
            throw ConfigurationError.invalid("VAPID_SUBJECT", "expected mailto: or https:, got \(subject)")
        }
        do {
            vapid = try await VAPIDIdentity(privateKeyPEM: pem, subject: subject)
        } catch {
            throw ConfigurationError.invalid("VAPID_PRIVATE_KEY", "expected a P-256 private key in PEM")
        }
    }
    var builder = try await ServiceBuilder(
        configuration, logger: logger, migrations: [Bundle.module.url(forResource: "Migrations", withExtension: nil)!],
        topology: Topology(
            service: "notifications", handlers: FeedConsumer.handlers, otherExchanges: [FeedRouting.liveExchange]),
        bundle: .module)
    let live = LiveChannel(
        exchange: FeedRouting.liveExchange, amqpURL: configuration.amqpURL, status: builder.brokerStatus, logger: logger
    )
    // NB: a committed entry reaches the sockets held here at once; the broker's copy, for the other replicas, is
    // dropped here as a seq already sent.
    builder.liveLoopback.connect(live)
    let repository = FeedPostgresRepository(database: builder.database)
    let webPush = vapid.map { WebPushSender(identity: $0, client: HTTPClient.shared, logger: logger) }
    let dispatcher = PushDispatcher(
        repository: repository, sender: pushSender ?? PlatformPushSender(web: webPush), grace: pushGrace,
        metrics: builder.metrics, logger: logger)
    let marks = DeliveryMarks(repository: repository, logger: logger)
    let controller = StreamController(
        repository: repository, marks: marks, hub: StreamHub(live: live),
        verifier: try await builder.accessTokenVerifier(),
        connections: builder.metrics.counter("websocket_connections_total"))
    controller.addRoutes(to: builder.router)
    DeviceController(repository: repository, verifier: try await builder.accessTokenVerifier(), vapid: vapid)
        .addRoutes(to: builder.router)
    let streamRouter = Router(context: StreamRequestContext.self)
    controller.addStream(to: streamRouter)
    builder.addServices(live, marks, dispatcher)
    return try builder.build(
        server: .http1WebSocketUpgrade(
            webSocketRouter: streamRouter, configuration: .init(ws: .init(autoPing: .enabled(timePeriod: .seconds(20))))
        ))
}
