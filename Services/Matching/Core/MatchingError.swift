import ServiceKit

/// Everything that can go wrong in a matching flow, and the problem each answers with.
public enum MatchingError: ProblemConvertible, Equatable {
    case invalid(field: String, String)
    /// Missing, or not the caller's to see (another user's or another campus's): the same answer.
    case notFound(String)
    /// The resource's state does not allow the action (accepting an expired offer).
    case conflict(String)
    /// The caller may not act at all: a moderator suspended them, or they deleted their account.
    case forbidden(String)

    public var problem: Problem {
        switch self {
        case .invalid(let field, let detail): .invalid(field, detail)
        case .notFound(let what): .notFound("No such \(what).")
        case .conflict(let detail): .conflict(detail)
        case .forbidden(let detail): Problem(.forbidden, detail: detail)
        }
    }
}
