import Foundation
import Hummingbird
import MatchingCore
import ServiceKit

/// The tutoring flow's API: one's profile, the feed of cards, swipes, matches and a matched user's profile, all on
/// the caller's campus.
struct TutoringController: Sendable {
    let steps: TutoringSteps

    func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        let group = router.group("/v1/tutoring").add(middleware: AuthenticationMiddleware(verifier: verifier))
        group.put("/profile", use: saveProfile)
        group.get("/profile", use: ownProfile)
        group.get("/feed", use: feed)
        group.post("/swipes", use: swipe)
        group.get("/matches", use: matches)
        group.delete("/matches/{id}", use: unmatch)
        group.get("/profiles/{id}", use: profile)
    }

    struct ProfileRequest: Decodable {
        var role: TutoringRole
        var courses: [String]
        var description: String?
        var rateCents: Int?
        var availability: String?
        var preferences: String?
    }

    struct SwipeRequest: Decodable {
        var userId: UUID
        var like: Bool
    }

    struct MatchList: ResponseEncodable {
        var matches: [TutoringMatch]
    }

    func saveProfile(request: Request, context: ServiceRequestContext) async throws -> TutoringProfile {
        let input = try await request.decodeJSON(as: ProfileRequest.self, context: context)
        return try await steps.saveProfile(
            TutoringProfileInput(
                role: input.role, courses: try TutoringRules.courses(input.courses),
                description: try TutoringRules.text(input.description, field: "description", limit: 1000),
                rateCents: try TutoringRules.rate(input.rateCents ?? 0),
                availability: try TutoringRules.text(input.availability, field: "availability", limit: 200),
                preferences: try TutoringRules.text(input.preferences, field: "preferences", limit: 500)),
            caller: try context.requireIdentity())
    }

    func ownProfile(request: Request, context: ServiceRequestContext) async throws -> TutoringProfile {
        let caller = try context.requireIdentity()
        guard let profile = try await steps.profile(caller.userId, visibleTo: caller) else {
            throw MatchingError.notFound("tutoring profile; create one with PUT /v1/tutoring/profile")
        }
        return profile
    }

    func feed(request: Request, context: ServiceRequestContext) async throws -> TutoringFeed {
        let parameters = request.uri.queryParameters
        var course: String?
        if let raw = parameters.get("course") {
            guard let normalized = TutoringRules.normalizedCourse(raw) else {
                throw MatchingError.invalid(field: "course", "course is a course code such as MAT-101.")
            }
            course = normalized
        }
        return try await steps.feed(
            caller: try context.requireIdentity(), course: course,
            after: try parameters.get("after").map(FeedCursor.init),
            limit: try QueryParameters.limit(parameters.get("limit")))
    }

    func swipe(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<SwipeResult> {
        let caller = try context.requireIdentity()
        let input = try await request.decodeJSON(as: SwipeRequest.self, context: context)
        guard input.userId != caller.userId else {
            throw MatchingError.invalid(field: "userId", "You cannot swipe on yourself.")
        }
        let result = try await steps.swipe(caller: caller, target: input.userId, likes: input.like)
        return EditedResponse(status: .created, response: result)
    }

    func matches(request: Request, context: ServiceRequestContext) async throws -> MatchList {
        MatchList(matches: try await steps.matches(of: try context.requireIdentity()))
    }

    func unmatch(request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        try await steps.unmatch(try context.id("match"), caller: try context.requireIdentity())
        return .noContent
    }

    func profile(request: Request, context: ServiceRequestContext) async throws -> TutoringProfile {
        guard
            let profile = try await steps.profile(
                try context.id("tutoring profile"), visibleTo: try context.requireIdentity())
        else { throw MatchingError.notFound("tutoring profile") }
        return profile
    }
}

extension TutoringProfile: ResponseEncodable {}
extension TutoringFeed: ResponseEncodable {}
extension SwipeResult: ResponseEncodable {}
