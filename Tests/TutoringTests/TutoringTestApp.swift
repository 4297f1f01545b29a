import MatchingTestSupport
import Tutoring

extension MatchingTestApp {
    /// Matching with the tutoring flow alone: the flow needs nothing of the others.
    static func make(_ overrides: [String: String] = [:]) async throws -> MatchingTestApp {
        try await make(flows: [TutoringFlow.self], overrides)
    }
}
