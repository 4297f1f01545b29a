import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import Messaging
import Postgres
import ServiceLifecycle

/// What every service is made of, created in one place: its database (migrated), its broker part (the exchange it
/// publishes to, the queues of what it handles, declared before it serves), the outbox relay, the consumer when it
/// handles events, the router with health, metrics and its OpenAPI description. A service's build file adds only
/// what is particular to it: its routes and long-lived parts.
public struct ServiceBuilder {
    public let configuration: ServiceConfiguration
    public let logger: Logger
    public let database: PostgresPool
    /// What `/metrics` shows; a service counts its own things here too.
    public let metrics = ServiceMetrics()
    public let brokerStatus: BrokerStatus
    /// Where the consumer hands what it publishes live once committed, when the service holds sockets itself.
    public let liveLoopback = LiveLoopback()
    /// Where the service's statements hand the relay the outbox rows they committed (`OutboxHandOff`).
    public let outboxHandOff = OutboxHandOff()
    public let router: Router<ServiceRequestContext>
    private let openAPI: String
    private var services: [any Service]

    /// Opens and migrates the database (the outbox and inbox first, then `migrations` in order), declares
    /// `topology`, and makes the relay, the consumer and the router. `bundle` holds the service's `openapi.yaml`, to
    /// which `openAPIParts` add theirs (see `OpenAPIDocument`).
    public init(
        _ configuration: ServiceConfiguration, logger: Logger, migrations: [URL], topology: Topology, bundle: Bundle,
        openAPIParts: [URL] = []
    ) async throws {
        self.configuration = configuration
        self.logger = logger
        brokerStatus = BrokerStatus(metrics: metrics.factory)
        database = try await openDatabase(configuration, migrations: migrations, logger: logger)
        do {
            try topology.declare(amqpURL: configuration.amqpURL)
        } catch {
            // The relay and the consumer declare it again whenever they connect.
            logger.warning("broker not reachable at start", metadata: ["error": "\(error)"])
        }
        guard let url = bundle.url(forResource: "openapi", withExtension: "yaml") else {
            throw ConfigurationError.invalid("openapi.yaml", "missing from the service's resources")
        }
        openAPI = try OpenAPIDocument.merging(
            String(contentsOf: url, encoding: .utf8),
            parts: openAPIParts.map { try String(contentsOf: $0, encoding: .utf8) })
        // A service whose events go on to people sheds load when they fall behind (`BACKLOG_LIMIT` events) or when
        // it carries `IN_FLIGHT_LIMIT` changes at once.
        let environment = EnvironmentReader(values: configuration.environment)
        let shedding =
            try topology.downstream.isEmpty
            ? nil
            : LoadShedding(
                backlog: EventBacklog(
                    topology: topology, limit: environment.integer("BACKLOG_LIMIT", in: 1...1_000_000) ?? 1_000,
                    postgresURL: configuration.postgresURL, amqpURL: configuration.amqpURL, logger: logger),
                inFlight: ChangesInFlight(limit: environment.integer("IN_FLIGHT_LIMIT", in: 1...1_000_000) ?? 256))
        router = makeServiceRouter(
            configuration: configuration, database: database, brokerStatus: brokerStatus,
            metrics: metrics, openAPI: openAPI, shedding: shedding)
        let relay = OutboxRelay(
            topology: topology, postgresURL: configuration.postgresURL, amqpURL: configuration.amqpURL,
            status: brokerStatus, logger: logger, handOff: outboxHandOff)
        services = [database, relay] + (shedding.map { [$0.backlog] } ?? [])
        if !topology.queues.isEmpty {
            services.append(
                EventConsumer(
                    topology: topology, postgresURL: configuration.postgresURL, amqpURL: configuration.amqpURL,
                    status: brokerStatus, logger: logger, loopback: liveLoopback))
        }
    }

    /// The verifier of access tokens, from `JWT_PUBLIC_KEY`, which services that take tokens need.
    public func accessTokenVerifier() async throws -> AccessTokenVerifier {
        guard let publicKey = configuration.jwtPublicKey else { throw ConfigurationError.missing("JWT_PUBLIC_KEY") }
        return try await AccessTokenVerifier(
            publicKeyPEM: publicKey, issuer: configuration.jwtIssuer, audience: configuration.jwtAudience)
    }

    /// Adds long-lived parts, started after the database, relay and consumer and stopped before them.
    public mutating func addServices(_ services: any Service...) {
        self.services += services
    }

    /// The application: the routes checked against the description, then the HTTP server, which starts last and
    /// stops first.
    public func build(server: HTTPServerBuilder = .http1()) throws -> some ApplicationProtocol {
        try checkDescription(of: router, against: openAPI, logger: logger)
        return Application(
            router: router, server: server,
            configuration: .init(
                address: .hostname(configuration.httpHost, port: configuration.httpPort),
                serverName: configuration.service),
            services: services, logger: logger)
    }
}

/// How every service's `main` runs: reads the configuration, sets up logging and tracing (`Telemetry`), builds and
/// runs. A failure to start prints one line that names the problem and exits with status 1.
public enum ServiceMain {
    public static func run<App: ApplicationProtocol>(
        service: String, defaultPort: Int, build: @Sendable (ServiceConfiguration, Logger) async throws -> App
    ) async {
        do {
            let configuration = try ServiceConfiguration(service: service, defaultPort: defaultPort)
            let logger = ServiceLogging.bootstrap(configuration)
            let tracing = try Telemetry.bootstrap(
                service: service, environment: configuration.environment, logger: logger)
            let application = try await build(configuration, logger)
            // NB: the exporter starts first and stops last, so that the last requests' spans go out too.
            try await ServiceGroup(
                configuration: .init(
                    services: (tracing.map { [$0] } ?? []) + [application],
                    gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            ).run()
        } catch {
            fail(service, error)
        }
    }

    /// Prints `<service>: <error>` on one line to standard error and exits with status 1.
    public static func fail(_ service: String, _ error: any Error) -> Never {
        let message = "\(error)".split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: " ")
        FileHandle.standardError.write(Data("\(service): \(message)\n".utf8))
        exit(1)
    }
}
