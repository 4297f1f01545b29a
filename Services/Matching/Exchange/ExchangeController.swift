import Foundation
import Hummingbird
import MatchingCore
import ServiceKit

/// The exchange flow's API: listings to create, browse, edit and withdraw, agreeing to one, and the exchange it makes
/// (cancel, complete, review), all on the caller's campus.
struct ExchangeController: Sendable {
    let steps: ExchangeSteps

    func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        let group = router.group().add(middleware: AuthenticationMiddleware(verifier: verifier))
        group.post("/v1/listings", use: createListing)
        group.get("/v1/listings", use: browse)
        group.get("/v1/listings/{id}", use: listing)
        group.patch("/v1/listings/{id}", use: editListing)
        group.delete("/v1/listings/{id}", use: withdrawListing)
        group.post("/v1/listings/{id}/agree", use: agree)
        group.post("/v1/listings/{id}/questions", use: ask)
        group.get("/v1/listings/{id}/questions", use: questions)
        group.get("/v1/exchanges/{id}", use: exchange)
        group.post("/v1/exchanges/{id}/cancel", use: cancel)
        group.post("/v1/exchanges/{id}/complete", use: complete)
        group.post("/v1/exchanges/{id}/review", use: review)
    }

    /// A point `{lat, lon}` or a place `{placeId}`.
    struct PlaceRequest: Decodable {
        var lat: Double?
        var lon: Double?
        var placeId: UUID?

        func validated() throws -> PlaceChoice {
            try ExchangeRules.place(lat: lat, lon: lon, placeId: placeId)
        }
    }

    struct ListingRequest: Decodable {
        /// The client's id for the listing: a retry with the same id returns the first result.
        var id: UUID?
        var offered: String
        var wanted: [String]?
        var category: String
        var place: PlaceRequest
        var photoId: UUID?
        var note: String?
    }

    struct ListingEditRequest: Decodable {
        var offered: String?
        var wanted: [String]?
        var category: String?
        var place: PlaceRequest?
        var photoId: UUID?
        var note: String?
    }

    struct AgreeRequest: Decodable {
        var offering: String?
    }

    struct ReviewRequest: Decodable {
        var stars: Int
        var text: String?
    }

    func createListing(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Listing> {
        let input = try await request.decodeJSON(as: ListingRequest.self, context: context)
        let draft = ListingDraft(
            offered: try ExchangeRules.offered(input.offered), wanted: try ExchangeRules.wanted(input.wanted),
            category: try ExchangeRules.category(input.category), place: try input.place.validated(),
            photoId: input.photoId,
            note: try ExchangeRules.text(input.note, field: "note", limit: ExchangeRules.maxNote))
        let listing = try await steps.createListing(id: input.id, draft, caller: try context.requireIdentity())
        return EditedResponse(status: .created, response: listing)
    }

    func browse(request: Request, context: ServiceRequestContext) async throws -> ListingPage {
        let parameters = request.uri.queryParameters
        let near = try QueryParameters.near(parameters.get("near")).map {
            GeoPoint(lat: $0.latitude, lon: $0.longitude)
        }
        if near == nil, parameters.get("radius") != nil {
            throw MatchingError.invalid(field: "radius", "radius is the distance from near; give near as well.")
        }
        return try await steps.browse(
            ListingQuery(
                text: try QueryParameters.text(parameters.get("q"), maxLength: ExchangeRules.maxQuery),
                category: try parameters.get("category").map { try ExchangeRules.category($0) }, near: near,
                radiusMeters: try QueryParameters.radius(
                    parameters.get("radius"), default: ExchangeRules.defaultRadius, range: 1...ExchangeRules.maxRadius),
                isMine: try QueryParameters.flag(parameters.get("mine"), field: "mine"),
                after: try parameters.get("after").map(ListingCursor.init),
                limit: try QueryParameters.limit(parameters.get("limit"))),
            caller: try context.requireIdentity())
    }

    func listing(request: Request, context: ServiceRequestContext) async throws -> Listing {
        guard
            let listing = try await steps.listing(try context.id("listing"), caller: try context.requireIdentity())
        else {
            throw MatchingError.notFound("listing")
        }
        return listing
    }

    func editListing(request: Request, context: ServiceRequestContext) async throws -> Listing {
        let id = try context.id("listing")
        let input = try await request.decodeJSON(as: ListingEditRequest.self, context: context)
        let edit = ListingEdit(
            offered: try input.offered.map(ExchangeRules.offered), wanted: try input.wanted.map(ExchangeRules.wanted),
            category: try input.category.map { try ExchangeRules.category($0) }, place: try input.place?.validated(),
            photoId: input.photoId,
            note: try input.note.map { try ExchangeRules.text($0, field: "note", limit: ExchangeRules.maxNote) ?? "" })
        return try await steps.editListing(id, edit, caller: try context.requireIdentity())
    }

    func withdrawListing(request: Request, context: ServiceRequestContext) async throws -> Listing {
        try await steps.withdrawListing(try context.id("listing"), caller: try context.requireIdentity())
    }

    func agree(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Exchange> {
        let id = try context.id("listing")
        // The body is optional: agreeing without saying what one brings sends none.
        var offering: String?
        if try await request.body.collect(upTo: .max).readableBytes > 0 {
            let input = try await request.decodeJSON(as: AgreeRequest.self, context: context)
            offering = try ExchangeRules.text(input.offering, field: "offering", limit: ExchangeRules.maxOffering)
        }
        let exchange = try await steps.agree(to: id, offering: offering, caller: try context.requireIdentity())
        return EditedResponse(status: .created, response: exchange)
    }

    struct QuestionList: ResponseEncodable {
        var questions: [ListingQuestion]
    }

    func ask(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<ListingQuestion> {
        let (question, isNew) = try await steps.ask(
            about: try context.id("listing"), caller: try context.requireIdentity())
        return EditedResponse(status: isNew ? .created : .ok, response: question)
    }

    func questions(request: Request, context: ServiceRequestContext) async throws -> QuestionList {
        QuestionList(
            questions: try await steps.questions(
                about: try context.id("listing"), caller: try context.requireIdentity()))
    }

    func exchange(request: Request, context: ServiceRequestContext) async throws -> Exchange {
        guard
            let exchange = try await steps.exchange(
                try context.id("exchange"), caller: try context.requireIdentity())
        else {
            throw MatchingError.notFound("exchange")
        }
        return exchange
    }

    func cancel(request: Request, context: ServiceRequestContext) async throws -> Exchange {
        try await steps.cancel(try context.id("exchange"), caller: try context.requireIdentity())
    }

    func complete(request: Request, context: ServiceRequestContext) async throws -> Exchange {
        try await steps.complete(try context.id("exchange"), caller: try context.requireIdentity())
    }

    func review(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<ExchangeReview> {
        let id = try context.id("exchange")
        let input = try await request.decodeJSON(as: ReviewRequest.self, context: context)
        let review = try await steps.review(
            id, stars: try ExchangeRules.stars(input.stars),
            text: try ExchangeRules.text(input.text, field: "text", limit: ExchangeRules.maxReview),
            caller: try context.requireIdentity())
        return EditedResponse(status: .created, response: review)
    }
}

extension Listing: ResponseEncodable {}
extension ListingPage: ResponseEncodable {}
extension ListingQuestion: ResponseEncodable {}
extension Exchange: ResponseEncodable {}
extension ExchangeReview: ResponseEncodable {}
