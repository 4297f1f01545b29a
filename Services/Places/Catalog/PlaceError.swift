import ServiceKit

/// Everything that can go wrong in places, and the problem each answers with.
package enum PlaceError: ProblemConvertible {
    case invalid(field: String, String)
    case notFound

    package var problem: Problem {
        switch self {
        case .invalid(let field, let detail): .invalid(field, detail)
        case .notFound: .notFound("No such place on your campus.")
        }
    }
}
