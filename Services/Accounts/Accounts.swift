import ServiceKit

/// The accounts service: sign-up, login and tokens.
@main
struct Accounts {
    static func main() async throws {
        let configuration = try ServiceConfiguration(service: "accounts", defaultPort: 8081)
        let logger = ServiceLogging.bootstrap(configuration)
        let app = try await buildApplication(configuration, logger: logger)
        try await app.runService()
    }
}
