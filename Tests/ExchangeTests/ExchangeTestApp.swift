import Exchange
import MatchingTestSupport

extension MatchingTestApp {
    /// Matching with the exchange flow alone: the flow needs nothing of the others.
    static func make(_ overrides: [String: String] = [:]) async throws -> MatchingTestApp {
        try await make(flows: [ExchangeFlow.self], overrides)
    }
}
