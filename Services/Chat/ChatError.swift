import ServiceKit

/// Everything that can go wrong in chat, and the problem each answers with.
enum ChatError: ProblemConvertible {
    case invalid(field: String, String)
    /// Missing, or not the caller's: a non-member learns nothing.
    case notFound
    case closed
    case idTaken
    /// The caller deleted their account (their access token outlives it by minutes).
    case erased
    /// No call of the caller's has this id.
    case callNotFound
    /// The caller or the callee is in another call.
    case busy(String)
    /// What was asked does not fit where the call is.
    case callOver(String)

    var problem: Problem {
        switch self {
        case .invalid(let field, let detail): .invalid(field, detail)
        case .notFound: .notFound("No such conversation.")
        case .closed: .conflict("The conversation is closed: the delivery is over.")
        case .idTaken: .conflict("That message id is already used.")
        case .erased:
            Problem(.forbidden, title: "Account deleted", detail: "This account was deleted: it sends nothing.")
        case .callNotFound: .notFound("No such call of yours.")
        case .busy(let detail): .conflict(detail)
        case .callOver(let detail): .conflict(detail)
        }
    }
}
