import Foundation
import Hummingbird
import ServiceKit

/// Why a student reports someone or a listing.
enum ReportReason: String, Codable, Sendable, CaseIterable {
    case spam, harassment, unsafe, fake, other
}

/// A report as moderators read it.
struct Report: Codable, Sendable, Equatable, ResponseEncodable {
    var id: UUID
    var reporterId: UUID
    var userId: UUID?
    var listingId: UUID?
    var reason: ReportReason
    var detail: String
    var createdAt: Date
    /// When a moderator closed it, or suspended its subject; nil while it is open.
    var closedAt: Date?
}

/// What a student reports: a student, a listing, or both (a listing and its owner).
struct NewReport: Sendable {
    var userId: UUID?
    var listingId: UUID?
    var reason: ReportReason
    var detail: String
}

/// Reports by students, and what the campus's moderators do with them: read them, and suspend a student.
struct ModerationController: Sendable {
    let repository: AccountPostgresRepository
    let verifier: AccessTokenVerifier
    /// Reports one student may file within a day.
    let reportsPerDay: Int

    func addRoutes(to router: Router<ServiceRequestContext>) {
        let group = router.group().add(middleware: AuthenticationMiddleware(verifier: verifier))
        group.post("/v1/reports", use: report)
        group.get("/v1/reports", use: reports)
        group.post("/v1/reports/{id}/close", use: close)
        group.post("/v1/users/{id}/suspend", use: suspend)
    }

    struct ReportRequest: Decodable {
        var userId: UUID?
        var listingId: UUID?
        var reason: String?
        var detail: String?
    }

    struct SuspendRequest: Decodable {
        var reason: String?
    }

    struct ReportList: ResponseEncodable {
        var reports: [Report]
    }

    func report(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Report> {
        let caller = try context.requireIdentity()
        let input = try await request.decodeJSON(as: ReportRequest.self, context: context)
        let report = try ModerationRules.report(input, reporterId: caller.userId)
        let (stored, isNew) = try await repository.report(report, by: caller, perDay: reportsPerDay)
        return EditedResponse(status: isNew ? .created : .ok, response: stored)
    }

    func close(request: Request, context: ServiceRequestContext) async throws -> Report {
        let caller = try context.requireIdentity()
        guard let raw = context.parameters.get("id"), let id = UUID(uuidString: raw) else {
            throw AccountError.invalid(field: "id", "id is a report's id.")
        }
        return try await repository.closeReport(id, by: caller)
    }

    func reports(request: Request, context: ServiceRequestContext) async throws -> ReportList {
        let caller = try context.requireIdentity()
        return ReportList(
            reports: try await repository.reports(campus: caller.campus, moderatorId: caller.userId, limit: 100))
    }

    func suspend(request: Request, context: ServiceRequestContext) async throws -> Response {
        let caller = try context.requireIdentity()
        guard let raw = context.parameters.get("id"), let userId = UUID(uuidString: raw) else {
            throw AccountError.invalid(field: "id", "id is a user's id.")
        }
        let input = try await request.decodeJSON(as: SuspendRequest.self, context: context)
        let reason = try ModerationRules.text(input.reason, field: "reason", required: true, limit: 500)
        guard userId != caller.userId else { throw AccountError.invalid(field: "id", "You cannot suspend yourself.") }
        try await repository.suspend(userId, reason: reason, by: caller)
        return Response(status: .noContent)
    }
}

/// The rules of reports, without I/O.
enum ModerationRules {
    static func report(_ input: ModerationController.ReportRequest, reporterId: UUID) throws(AccountError) -> NewReport
    {
        guard input.userId != nil || input.listingId != nil else {
            throw .invalid(field: "userId", "Say whom (userId) or which listing (listingId) you report.")
        }
        guard input.userId != reporterId else { throw .invalid(field: "userId", "You cannot report yourself.") }
        guard let raw = input.reason else {
            throw .invalid(field: "reason", "Say why: spam, harassment, unsafe, fake or other.")
        }
        guard let reason = ReportReason(rawValue: raw) else {
            throw .invalid(field: "reason", "reason is spam, harassment, unsafe, fake or other.")
        }
        return NewReport(
            userId: input.userId, listingId: input.listingId, reason: reason,
            detail: try text(input.detail, field: "detail", required: false, limit: 2000))
    }

    static func text(_ value: String?, field: String, required: Bool, limit: Int) throws(AccountError) -> String {
        let text = (value ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !required || !text.isEmpty else { throw .invalid(field: field, "Say why (\(field)).") }
        guard (value ?? "").unicodeScalars.count <= limit else {
            throw .invalid(field: field, "\(field) has at most \(limit) characters.")
        }
        return text
    }
}
