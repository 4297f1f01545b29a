import Foundation
import Hummingbird
import PlaceCatalog
import ServiceKit

/// The places API: search as the user types, nearby places, one place. Always on the caller's campus.
struct PlaceController: Sendable {
    let repository: PlacePostgresRepository
    let campuses: CampusDirectory

    func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        router.group("/v1/places")
            .add(middleware: AuthenticationMiddleware(verifier: verifier))
            .get(use: search)
            .get("nearby", use: nearby)
            .get("{id}", use: place)
    }

    struct PlaceList: ResponseEncodable {
        var places: [Place]
    }

    /// `GET /v1/places?q=&near=lat,lon&kind=&limit=`
    func search(request: Request, context: ServiceRequestContext) async throws -> PlaceList {
        let identity = try context.requireIdentity()
        let parameters = request.uri.queryParameters
        guard let text = try QueryParameters.text(parameters.get("q"), maxLength: PlaceQuery.maxQueryLength) else {
            throw PlaceError.invalid(field: "q", "Type at least one character to search.")
        }
        let kind = try PlaceQuery.kind(parameters.get("kind"))
        let limit = try QueryParameters.limit(parameters.get("limit"), default: 10)
        let near =
            try QueryParameters.near(parameters.get("near")).map {
                Coordinate(latitude: $0.latitude, longitude: $0.longitude)
            }
            ?? center(of: identity.campus)
        return PlaceList(
            places: try await repository.search(
                text: text, near: near, campus: identity.campus, kind: kind, limit: limit))
    }

    /// `GET /v1/places/nearby?lat=&lon=&radius=&kind=&limit=`
    func nearby(request: Request, context: ServiceRequestContext) async throws -> PlaceList {
        let identity = try context.requireIdentity()
        let parameters = request.uri.queryParameters
        let point = Coordinate(
            latitude: try PlaceQuery.latitude(parameters.get("lat")),
            longitude: try PlaceQuery.longitude(parameters.get("lon")))
        let radius = try QueryParameters.radius(
            parameters.get("radius"), default: 500, range: 1...PlaceQuery.maxRadiusMeters)
        let kind = try PlaceQuery.kind(parameters.get("kind"))
        let limit = try QueryParameters.limit(parameters.get("limit"))
        return PlaceList(
            places: try await repository.nearby(
                point, radius: radius, campus: identity.campus, kind: kind, limit: limit))
    }

    /// `GET /v1/places/{id}`; another campus's place is 404 like a missing one.
    func place(request: Request, context: ServiceRequestContext) async throws -> Place {
        let identity = try context.requireIdentity()
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)),
            let place = try await repository.place(id: id, campus: identity.campus)
        else { throw PlaceError.notFound }
        return place
    }

    private func center(of campus: String) -> Coordinate {
        let center = campuses.campus(forDomain: campus)?.center ?? .init(latitude: 0, longitude: 0)
        return Coordinate(latitude: center.latitude, longitude: center.longitude)
    }
}

extension Place: ResponseEncodable {}
