import Logging
import MatchingTestSupport
import Rides

extension MatchingTestApp {
    /// Matching with the rides flow alone: the flow needs nothing of the others.
    static func make(_ overrides: [String: String] = [:]) async throws -> MatchingTestApp {
        try await make(flows: [RidesFlow.self], overrides)
    }

    /// The flow's settings, as the application read them (with its campuses).
    var settings: RideSettings {
        get throws { try RideSettings(service.configuration, logger: Logger(label: "test")) }
    }

    /// The flow's use cases with the application's settings.
    var steps: RideSteps {
        get throws { RideSteps(database: service.database.pool, settings: try settings) }
    }
}
