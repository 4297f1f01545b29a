import MatchingTestSupport
import Rides

extension MatchingTestApp {
    /// Matching with the rides flow alone: the flow needs nothing of the others.
    static func make(_ overrides: [String: String] = [:]) async throws -> MatchingTestApp {
        try await make(flows: [RidesFlow.self], overrides)
    }
}
