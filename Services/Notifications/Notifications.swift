import ServiceKit

/// The notifications service: each user's durable feed, live over one WebSocket, by polling, or by push.
@main
struct Notifications {
    static func main() async throws {
        let configuration = try ServiceConfiguration(service: "notifications", defaultPort: 8085)
        let logger = ServiceLogging.bootstrap(configuration)
        try await buildApplication(configuration, logger: logger).runService()
    }
}
