import Exchange
import MatchingCore
import MatchingTestSupport

extension MatchingTestApp {
    /// Matching with the exchange flow alone: the flow needs nothing of the others.
    static func make(_ overrides: [String: String] = [:]) async throws -> MatchingTestApp {
        try await make(flows: [ExchangeFlow.self], overrides)
    }

    /// The flow's use cases with the campuses the application reads.
    var steps: ExchangeSteps {
        get throws { ExchangeSteps(database: service.database.pool, campuses: try CampusPoints(service.configuration)) }
    }
}
