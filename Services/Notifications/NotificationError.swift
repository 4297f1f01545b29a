import ServiceKit

/// Everything that can go wrong in notifications, and the problem each answers with.
enum NotificationError: ProblemConvertible {
    case invalid(field: String, String)

    var problem: Problem {
        switch self {
        case .invalid(let field, let detail): .invalid(field, detail)
        }
    }
}
