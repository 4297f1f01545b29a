import ServiceKit

/// The matching service: runs, orders, offers and matches of the delivery flow.
@main
struct Matching {
    static func main() async throws {
        let configuration = try ServiceConfiguration(service: "matching", defaultPort: 8083)
        let logger = ServiceLogging.bootstrap(configuration)
        let app = try await buildApplication(configuration, logger: logger)
        try await app.runService()
    }
}
