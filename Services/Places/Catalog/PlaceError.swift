import ServiceKit

/// Everything that can go wrong in places, and the problem each answers with.
package enum PlaceError: ProblemConvertible {
    case invalid(field: String, String)
    case notFound
    /// No street joins the two points, or one of them (`field`) is too far from any street of the mode.
    case noRoute(field: String?, String)

    package var problem: Problem {
        switch self {
        case .invalid(let field, let detail): .invalid(field, detail)
        case .notFound: .notFound("No such place on your campus.")
        case .noRoute(let field, let detail):
            Problem(.notFound, title: "No route", detail: detail, field: field, type: "/problems/no-route")
        }
    }
}
