import Foundation
import ServiceKit

/// The places service: search restaurants and buildings. `places` serves HTTP; `places import FILE [--campus
/// DOMAIN]` loads GeoJSON; `places benchmark` measures import and search.
@main
struct Places {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let configuration = try ServiceConfiguration(service: "places", defaultPort: 8082)
        let logger = ServiceLogging.bootstrap(configuration)
        switch arguments.first {
        case nil, "serve":
            try await buildApplication(configuration, logger: logger).runService()
        case "import":
            try await runImport(arguments: Array(arguments.dropFirst()), configuration, logger: logger)
        case "benchmark":
            try await PlacesBenchmark(arguments: Array(arguments.dropFirst()), logger: logger).run()
        default:
            print("usage: places [serve] | places import FILE [--campus DOMAIN] | places benchmark [--sizes N,N]")
            exit(2)
        }
    }
}
