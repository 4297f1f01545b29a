import Contracts
import Foundation
import Hummingbird
import MatchingCore
import ServiceKit

/// The rides flow's API: the driver's profile and position, the rider's request, open requests near a driver, and
/// the ride one driver accepts and marks, all on the caller's campus.
struct RidesController: Sendable {
    let steps: RideSteps

    func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        let group = router.group().add(middleware: AuthenticationMiddleware(verifier: verifier))
        group.put("/v1/rides/driver", use: saveDriver)
        group.get("/v1/rides/driver", use: driver)
        group.put("/v1/rides/driver/location", use: reportPosition)
        group.delete("/v1/rides/driver/location", use: goOffline)
        group.post("/v1/rides", use: requestRide)
        group.get("/v1/rides/requests", use: openRequests)
        group.get("/v1/rides/current", use: currentRide)
        group.get("/v1/rides/{id}", use: ride)
        group.post("/v1/rides/{id}/cancel", use: cancel)
        group.post("/v1/rides/{id}/accept", use: accept)
        group.post("/v1/rides/{id}/arrived") { try await mark(.arrived, request: $0, context: $1) }
        group.post("/v1/rides/{id}/started", use: start)
        group.post("/v1/rides/{id}/completed") { try await mark(.completed, request: $0, context: $1) }
    }

    struct DriverRequest: Decodable {
        var car: String
        var seats: Int
    }

    struct PositionRequest: Decodable {
        var lat: Double
        var lon: Double
    }

    /// A point `{lat, lon}` or a place `{placeId}`.
    struct SpotRequest: Decodable {
        var lat: Double?
        var lon: Double?
        var placeId: UUID?

        func validated(field: String) throws -> PlaceChoice {
            try PlaceChoice.validated(lat: lat, lon: lon, placeId: placeId, field: field)
        }
    }

    /// The rider's code, which the driver enters to start the ride.
    struct StartRequest: Decodable {
        var code: String?
    }

    struct RideRequestBody: Decodable {
        /// The client's id for the request: a retry with the same id returns the first result.
        var id: UUID?
        var pickup: SpotRequest
        var dropoff: SpotRequest?
        var note: String?
    }

    func saveDriver(request: Request, context: ServiceRequestContext) async throws -> Driver {
        let input = try await request.decodeJSON(as: DriverRequest.self, context: context)
        return try await steps.saveDriver(
            car: try RideRules.car(input.car), seats: try RideRules.seats(input.seats),
            caller: try context.requireIdentity())
    }

    func driver(request: Request, context: ServiceRequestContext) async throws -> Driver {
        guard let driver = try await steps.driver(caller: try context.requireIdentity()) else {
            throw RideRules.missingDriverProfile
        }
        return driver
    }

    func reportPosition(request: Request, context: ServiceRequestContext) async throws -> Driver {
        let input = try await request.decodeJSON(as: PositionRequest.self, context: context)
        let point = try GeoPoint.validated(lat: input.lat, lon: input.lon, field: nil)
        return try await steps.reportPosition(point, caller: try context.requireIdentity())
    }

    func goOffline(request: Request, context: ServiceRequestContext) async throws -> Driver {
        try await steps.goOffline(caller: try context.requireIdentity())
    }

    func requestRide(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Ride> {
        let input = try await request.decodeJSON(as: RideRequestBody.self, context: context)
        let draft = RideDraft(
            pickup: try input.pickup.validated(field: "pickup"),
            dropoff: try input.dropoff?.validated(field: "dropoff"), note: try RideRules.note(input.note))
        let ride = try await steps.requestRide(id: input.id, draft, caller: try context.requireIdentity())
        return EditedResponse(status: .created, response: ride)
    }

    func openRequests(request: Request, context: ServiceRequestContext) async throws -> RideRequestList {
        let parameters = request.uri.queryParameters
        let near = try RideRules.near(lat: parameters.get("lat"), lon: parameters.get("lon"))
        return try await steps.openRequests(
            near: near,
            radiusMeters: try QueryParameters.radius(
                parameters.get("radius"), default: RideRules.defaultRadius, range: 1...RideRules.maxRadius),
            limit: try QueryParameters.limit(parameters.get("limit")), caller: try context.requireIdentity())
    }

    func ride(request: Request, context: ServiceRequestContext) async throws -> Ride {
        guard let ride = try await steps.ride(try context.id("ride"), caller: try context.requireIdentity()) else {
            throw MatchingError.notFound("ride")
        }
        return ride
    }

    func currentRide(request: Request, context: ServiceRequestContext) async throws -> Ride {
        guard let ride = try await steps.currentRide(caller: try context.requireIdentity()) else {
            throw MatchingError.notFound("current ride; the caller asks for and drives none that is not over")
        }
        return ride
    }

    func cancel(request: Request, context: ServiceRequestContext) async throws -> Ride {
        try await steps.cancel(try context.id("ride"), caller: try context.requireIdentity())
    }

    func accept(request: Request, context: ServiceRequestContext) async throws -> Ride {
        try await steps.accept(try context.id("ride"), caller: try context.requireIdentity())
    }

    func start(request: Request, context: ServiceRequestContext) async throws -> Ride {
        let input = try await request.decodeJSON(as: StartRequest.self, context: context, emptyAs: StartRequest())
        let code = try RideCode.validated(input.code)
        return try await steps.mark(try context.id("ride"), .started, code: code, caller: try context.requireIdentity())
    }

    func mark(_ step: RideStep, request: Request, context: ServiceRequestContext) async throws -> Ride {
        try await steps.mark(try context.id("ride"), step, caller: try context.requireIdentity())
    }
}

extension Driver: ResponseEncodable {}
extension Ride: ResponseEncodable {}
extension RideRequestList: ResponseEncodable {}
