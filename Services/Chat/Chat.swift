import ServiceKit

/// The chat service: a conversation per match, between its orderer and deliverer, until the delivery is done.
@main
struct Chat {
    static func main() async throws {
        let configuration = try ServiceConfiguration(service: "chat", defaultPort: 8084)
        let logger = ServiceLogging.bootstrap(configuration)
        try await buildApplication(configuration, logger: logger).runService()
    }
}
