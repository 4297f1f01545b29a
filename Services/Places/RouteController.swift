import Foundation
import Hummingbird
import PlaceCatalog
import ServiceKit

/// The routes API: a walk or a drive along the streets between two points of the caller's campus.
struct RouteController: Sendable {
    let repository: RoutePostgresRepository
    let campuses: CampusDirectory

    func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        router.group("/v1/routes")
            .add(middleware: AuthenticationMiddleware(verifier: verifier))
            .get(use: route)
    }

    /// `GET /v1/routes?from=lat,lon&to=lat,lon&mode=walk|drive`
    func route(request: Request, context: ServiceRequestContext) async throws -> Route {
        let identity = try context.requireIdentity()
        let parameters = request.uri.queryParameters
        let campus = campuses.campus(forDomain: identity.campus)
        let from = try RouteQuery.point(parameters.get("from"), field: "from", campus: campus)
        let to = try RouteQuery.point(parameters.get("to"), field: "to", campus: campus)
        let mode = try RouteQuery.mode(parameters.get("mode"))
        return try await repository.route(from: from, to: to, mode: mode, campus: identity.campus)
    }
}

extension Route: ResponseEncodable {}
