import Foundation
import Hummingbird
import Logging
import Messaging
import Postgres

/// What every service's router has: problem+json errors, metrics, the body limit, load shedding (for a service whose
/// events go on to people), health, metrics and the OpenAPI description. A service adds its own routes to the router
/// this returns.
public func makeServiceRouter(
    configuration: ServiceConfiguration, database: PostgresPool, brokerStatus: BrokerStatus,
    metrics: ServiceMetrics, openAPI: String?, shedding: LoadShedding?
) -> Router<ServiceRequestContext> {
    let router = Router(context: ServiceRequestContext.self)
    if Telemetry.isEnabled(configuration.environment) {
        // A server span for each request (named by its route, without ids), which the rest of its work continues.
        // NB: a socket's access token may be in its query.
        router.add(middleware: TracingMiddleware(redactingQueryParameters: ["access_token"]))
    }
    // Browsers take every answer as the type it names.
    router.add(middleware: HeaderMiddleware(.xContentTypeOptions, "nosniff"))
    router.add(middleware: MetricsMiddleware(metrics: metrics))
    router.add(middleware: ProblemMiddleware())
    if let openAPI {
        router.add(middleware: MethodNotAllowedMiddleware(openAPI: openAPI))
    }
    router.add(middleware: BodyLimitMiddleware(limit: configuration.maxBodyBytes))
    router.add(middleware: QueryTextMiddleware())
    if let shedding {
        router.add(middleware: LoadSheddingMiddleware(shedding, metrics: metrics))
    }
    router.get("/health/live") { _, _ in ["status": "ok"] }
    router.get("/health/ready") { _, _ -> [String: String] in
        let isDatabaseReady = (try? await database.query("SELECT 1 AS one")) != nil
        guard isDatabaseReady, brokerStatus.isConnected else {
            throw Problem(
                .serviceUnavailable, title: "Not ready",
                detail:
                    "database \(isDatabaseReady ? "ok" : "unreachable"), broker \(brokerStatus.isConnected ? "ok" : "unreachable")"
            )
        }
        return ["status": "ok", "database": "ok", "broker": "ok"]
    }
    router.get("/metrics") { _, _ in
        shedding?.record(in: metrics)
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
            body: .init(byteBuffer: ByteBuffer(string: metrics.render())))
    }
    if let openAPI {
        router.get("/openapi.yaml") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/yaml"],
                body: .init(byteBuffer: ByteBuffer(string: openAPI)))
        }
    }
    return router
}

/// Refuses to start a debug build whose routes and OpenAPI description disagree (so every test that builds a
/// service checks it); a release build logs the difference instead.
public func checkDescription(of router: Router<ServiceRequestContext>, against openAPI: String, logger: Logger) throws {
    let gaps = OpenAPICoverage.gaps(router: router, openAPI: openAPI)
    guard !gaps.isEmpty else { return }
    #if DEBUG
        throw ConfigurationError.invalid("openapi.yaml", gaps.joined(separator: "; "))
    #else
        logger.warning("the OpenAPI description disagrees with the routes", metadata: ["gaps": "\(gaps)"])
    #endif
}

/// The service's connection pool, with the outbox and inbox tables and then the service's own migrations applied.
public func openDatabase(_ configuration: ServiceConfiguration, migrations: URL..., logger: Logger) async throws
    -> PostgresPool
{
    try await openDatabase(configuration, migrations: migrations, logger: logger)
}

func openDatabase(_ configuration: ServiceConfiguration, migrations: [URL], logger: Logger) async throws -> PostgresPool
{
    let deadline = ContinuousClock.now + .seconds(configuration.databaseWaitSeconds)
    var delay = Duration.milliseconds(500)
    var waiting = false
    while true {
        do {
            let database = try PostgresPool(
                url: configuration.postgresURL, size: configuration.postgresPoolSize,
                applicationName: configuration.service, logger: logger)
            try await PostgresMigrator(directories: [PostgresMigrator.messagingDirectory] + migrations, logger: logger)
                .migrate(database)
            if waiting { logger.info("the database is reachable") }
            return database
        } catch let error as PostgresError where error.isConnectionFailure && ContinuousClock.now < deadline {
            // One line when the wait begins, not one per attempt: a replica started before its database is healthy
            // and unhealthy until then, and its log says why once.
            if !waiting {
                logger.warning(
                    "waiting for the database",
                    metadata: ["error": "\(error)", "seconds": "\(configuration.databaseWaitSeconds)"])
                waiting = true
            }
            try await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
        }
    }
}
