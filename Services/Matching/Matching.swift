import ServiceKit

/// The matching service: runs, orders, offers and matches of the delivery flow. `matching simulate` runs a
/// simulated campus day against a fresh database and reports how well it matched.
@main
struct Matching {
    static func main() async throws {
        let configuration = try ServiceConfiguration(service: "matching", defaultPort: 8083)
        let logger = ServiceLogging.bootstrap(configuration)
        if CommandLine.arguments.dropFirst().first == "simulate" {
            try await DeliverySimulation(arguments: Array(CommandLine.arguments.dropFirst(2)), logger: logger).run()
            return
        }
        try await buildApplication(configuration, logger: logger).runService()
    }
}
