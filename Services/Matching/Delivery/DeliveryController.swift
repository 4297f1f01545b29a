import Foundation
import Hummingbird
import MatchingCore
import ServiceKit

/// The delivery flow's API: runs, restaurants with runs, orders, offers and matches, on the caller's campus.
struct DeliveryController: Sendable {
    let steps: DeliverySteps
    let settings: DeliverySettings

    func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        let group = router.group().add(middleware: AuthenticationMiddleware(verifier: verifier))
        group.post("/v1/runs", use: openRun)
        group.delete("/v1/runs/{id}", use: checkOut)
        group.get("/v1/restaurants", use: restaurants)
        group.get("/v1/restaurants/{id}/runs", use: runsAtRestaurant)
        group.post("/v1/orders", use: placeOrder)
        group.get("/v1/orders/open", use: openOrders)
        group.post("/v1/orders/{id}/take", use: take)
        group.get("/v1/orders/{id}", use: order)
        group.post("/v1/orders/{id}/cancel", use: cancelOrder)
        group.post("/v1/offers/{id}/accept", use: accept)
        group.post("/v1/offers/{id}/decline", use: decline)
        group.get("/v1/delivery/current", use: current)
        group.get("/v1/matches/{id}", use: match)
        group.post("/v1/matches/{id}/cancel", use: cancelMatch)
        group.post("/v1/matches/{id}/complete", use: completeMatch)
        group.put("/v1/matches/{id}/location", use: reportPosition)
    }

    struct OpenRunRequest: Decodable {
        /// The client's id for the run: a retry with the same id returns the first result.
        var id: UUID?
        var restaurantId: UUID
        var destinationId: UUID
        var capacity: Int?
        var minutes: Int?
    }

    struct PlaceOrderRequest: Decodable {
        var id: UUID?
        var restaurantId: UUID?
        /// One to five, any of which will do; instead of `restaurantId`.
        var restaurantIds: [UUID]?
        var destinationId: UUID?
        /// A point on the campus, instead of `destinationId`.
        var destination: GeoPoint?
        var items: String
        var runId: UUID?
    }

    struct TakeRequest: Decodable {
        /// Which of the caller's open runs takes the order; their open run when nil.
        var runId: UUID?
        /// Without an open run: the order's restaurant to check in at, or else the deliverer's position, from which
        /// the nearest of them is chosen (else the order's first).
        var restaurantId: UUID?
        var position: PositionRequest?
    }

    struct PositionRequest: Decodable {
        var lat: Double
        var lon: Double
    }

    struct RestaurantList: ResponseEncodable {
        var restaurants: [RestaurantWithRuns]
    }

    struct RunList: ResponseEncodable {
        var runs: [Run]
    }

    func openRun(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Run> {
        let caller = try context.requireIdentity()
        let input = try await request.decodeJSON(as: OpenRunRequest.self, context: context)
        let run = try await steps.openRun(
            id: input.id, caller: caller, restaurantId: input.restaurantId, destinationId: input.destinationId,
            capacity: try DeliveryRules.capacity(input.capacity),
            minutes: try DeliveryRules.minutes(input.minutes, settings: settings))
        return EditedResponse(status: .created, response: run)
    }

    func checkOut(request: Request, context: ServiceRequestContext) async throws -> Run {
        try await steps.checkOut(runId: try context.id("run"), caller: try context.requireIdentity())
    }

    func restaurants(request: Request, context: ServiceRequestContext) async throws -> RestaurantList {
        RestaurantList(
            restaurants: try await steps.restaurantsWithRuns(campus: try context.requireIdentity().campus))
    }

    func runsAtRestaurant(request: Request, context: ServiceRequestContext) async throws -> RunList {
        let caller = try context.requireIdentity()
        let parameters = request.uri.queryParameters
        return RunList(
            runs: try await steps.openRuns(
                restaurantId: try context.id("restaurant"), caller: caller,
                from: try GeoPoint.query(lat: parameters.get("lat"), lon: parameters.get("lon"))))
    }

    func openOrders(request: Request, context: ServiceRequestContext) async throws -> OpenOrderPage {
        let caller = try context.requireIdentity()
        let parameters = request.uri.queryParameters
        var restaurantId: UUID?
        if let raw = parameters.get("restaurantId") {
            guard let id = UUID(uuidString: raw) else {
                throw MatchingError.invalid(field: "restaurantId", "restaurantId is a place's id.")
            }
            restaurantId = id
        }
        return try await steps.openOrders(
            caller: caller, from: try GeoPoint.query(lat: parameters.get("lat"), lon: parameters.get("lon")),
            restaurantId: restaurantId, limit: try QueryParameters.limit(parameters.get("limit")),
            after: parameters.get("after"))
    }

    func take(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Match> {
        let input = try await request.decodeJSON(as: TakeRequest.self, context: context, emptyAs: TakeRequest())
        let position = try input.position.map { try GeoPoint.validated(lat: $0.lat, lon: $0.lon, field: "position") }
        let match = try await steps.take(
            orderId: try context.id("order"), runId: input.runId,
            checkIn: TakeCheckIn(restaurantId: input.restaurantId, position: position),
            caller: try context.requireIdentity())
        return EditedResponse(status: .created, response: match)
    }

    func placeOrder(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Order> {
        let caller = try context.requireIdentity()
        let input = try await request.decodeJSON(as: PlaceOrderRequest.self, context: context)
        let order = try await steps.placeOrder(
            id: input.id, caller: caller,
            restaurantIds: try DeliveryRules.restaurants(input.restaurantId, input.restaurantIds),
            destination: try DeliveryRules.destination(id: input.destinationId, point: input.destination),
            items: try DeliveryRules.items(input.items), runId: input.runId)
        return EditedResponse(status: .created, response: order)
    }

    func order(request: Request, context: ServiceRequestContext) async throws -> Order {
        try await steps.order(id: try context.id("order"), caller: try context.requireIdentity())
    }

    func cancelOrder(request: Request, context: ServiceRequestContext) async throws -> Order {
        try await steps.cancelOrder(id: try context.id("order"), caller: try context.requireIdentity())
    }

    func accept(request: Request, context: ServiceRequestContext) async throws -> Match {
        try await steps.accept(offerId: try context.id("offer"), caller: try context.requireIdentity())
    }

    func decline(request: Request, context: ServiceRequestContext) async throws -> Offer {
        try await steps.decline(offerId: try context.id("offer"), caller: try context.requireIdentity())
    }

    func current(request: Request, context: ServiceRequestContext) async throws -> DeliveryUnderWay {
        try await steps.current(caller: try context.requireIdentity())
    }

    func match(request: Request, context: ServiceRequestContext) async throws -> Match {
        try await steps.match(id: try context.id("match"), caller: try context.requireIdentity())
    }

    func cancelMatch(request: Request, context: ServiceRequestContext) async throws -> Match {
        try await steps.cancelMatch(id: try context.id("match"), caller: try context.requireIdentity())
    }

    func completeMatch(request: Request, context: ServiceRequestContext) async throws -> Match {
        try await steps.completeMatch(id: try context.id("match"), caller: try context.requireIdentity())
    }

    func reportPosition(request: Request, context: ServiceRequestContext) async throws -> Match {
        let input = try await request.decodeJSON(as: PositionRequest.self, context: context)
        let point = try GeoPoint.validated(lat: input.lat, lon: input.lon, field: nil)
        return try await steps.reportPosition(
            point, matchId: try context.id("match"), caller: try context.requireIdentity())
    }
}

extension Run: ResponseEncodable {}
extension Order: ResponseEncodable {}
extension Offer: ResponseEncodable {}
extension OpenOrderPage: ResponseEncodable {}
extension Match: ResponseEncodable {}
extension DeliveryUnderWay: ResponseEncodable {}
