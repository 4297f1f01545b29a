import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import Messaging
import NIOSSL
import ServiceKit
import ServiceLifecycle

/// Notifications' part of the system: the feeds it fills from events that name their recipients, the live channel
/// (on which its consumer publishes each entry once committed), the push dispatcher and the devices it pushes to, the
/// HTTP and WebSocket routes. Pushes go to `pushSender` when given (tests), else to each device's push service: Web
/// Push with the VAPID key of `VAPID_PRIVATE_KEY` (or `_FILE`, a P-256 key in PEM) and `VAPID_SUBJECT`; APNs with
/// `APNS_KEY_FILE` and the settings beside it (`APNsSettings`); FCM with `FCM_SERVICE_ACCOUNT_FILE`. `APNS_CA_FILE`
/// makes APNs trust a CA of its own rather than the system's (a stand-in of the tests).
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
    let apnsSettings = try APNsSettings.read(reader)
    let fcmSettings = try FCMSettings.read(reader)
    var apnsClient = HTTPClient.shared
    var ownClient: HTTPClient? = nil
    if let caFile = reader.string("APNS_CA_FILE") {
        var tls = TLSConfiguration.makeClientConfiguration()
        guard let roots = try? NIOSSLCertificate.fromPEMFile(caFile), !roots.isEmpty else {
            throw ConfigurationError.invalid("APNS_CA_FILE", "expected certificates in PEM at \(caFile)")
        }
        tls.trustRoots = .certificates(roots)
        apnsClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        ownClient = apnsClient
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
    var platforms = PlatformPushSender(
        web: vapid.map { WebPushSender(identity: $0, client: HTTPClient.shared, logger: logger) })
    if let settings = apnsSettings {
        platforms.apns = APNsSender(
            settings: settings, providerToken: try await APNsProviderToken(settings: settings), client: apnsClient)
    }
    if let settings = fcmSettings {
        platforms.fcm = FCMSender(
            settings: settings,
            accessToken: try await FCMAccessToken(account: settings.account, client: HTTPClient.shared),
            client: HTTPClient.shared)
    }
    let dispatcher = PushDispatcher(
        repository: repository, sender: pushSender ?? platforms, grace: pushGrace, metrics: builder.metrics,
        logger: logger)
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
    if let ownClient { builder.addServices(ClosedAtShutdown(client: ownClient)) }
    return try builder.build(
        server: .http1WebSocketUpgrade(
            webSocketRouter: streamRouter, configuration: .init(ws: .init(autoPing: .enabled(timePeriod: .seconds(20))))
        ))
}

/// Shuts an HTTP client of the service's own down when the service stops.
private struct ClosedAtShutdown: Service {
    let client: HTTPClient

    func run() async throws {
        try? await gracefulShutdown()
        try await client.shutdown()
    }
}
