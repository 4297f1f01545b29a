import ServiceKit

/// Everything that can go wrong in chat, and the problem each answers with.
enum ChatError: ProblemConvertible {
    case invalid(field: String, String)
    /// Missing, or not the caller's: a non-member learns nothing.
    case notFound
    case closed
    case idTaken

    var problem: Problem {
        switch self {
        case .invalid(let field, let detail): .invalid(field, detail)
        case .notFound: .notFound("No such conversation.")
        case .closed: .conflict("The conversation is closed: the delivery is over.")
        case .idTaken: .conflict("That message id is already used.")
        }
    }
}
