import Foundation
import Hummingbird
import ServiceKit
import ServiceLifecycle
import TestSupport

extension RunningSystem {
    /// Runs a service's application in this process as `name`, on a fresh database and the system's vhost and key, and
    /// waits until it is ready; for a service put together in the test (matching with a flow of the test's own).
    /// Returns its service group, which the caller shuts down.
    func serve<App: ApplicationProtocol>(
        _ name: String, _ build: (ServiceConfiguration) async throws -> App
    ) async throws -> ServiceGroup {
        let database = try await TestDatabase.make(migrations: [])
        let port = try Self.freePort()
        let configuration = try ServiceConfiguration(
            service: name, defaultPort: port,
            environment: [
                "HTTP_PORT": String(port), "POSTGRES_URL": database.url, "AMQP_URL": broker.url,
                "POSTGRES_POOL_SIZE": "4", "JWT_PUBLIC_KEY": privateKey.publicKey.pemRepresentation,
                "SCHEDULER_INTERVAL_SECONDS": "0.1",
            ])
        let group = ServiceGroup(services: [try await build(configuration)], logger: TestEnvironment.logger)
        Task { try await group.run() }
        ports[name] = port
        try await eventually("\(name) to be ready", timeout: 60) {
            (try? await self.request(.GET, name, "/health/ready").status) == 200
        }
        return group
    }
}
