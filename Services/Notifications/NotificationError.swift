import ServiceKit

/// Everything that can go wrong in notifications, and the problem each answers with.
enum NotificationError: ProblemConvertible {
    case invalid(field: String, String)
    /// The caller deleted their account; their access token has not expired yet.
    case accountDeleted

    var problem: Problem {
        switch self {
        case .invalid(let field, let detail): .invalid(field, detail)
        case .accountDeleted: Problem(.forbidden, title: "Account deleted", detail: "This account was deleted.")
        }
    }
}
