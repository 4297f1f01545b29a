import Contracts
import Foundation
import Messaging
import Postgres
import ServiceKit

extension AccountPostgresRepository {
    /// Stores a student's report of a student of their campus (404 for anyone else) or of a listing.
    func report(_ report: NewReport, by reporter: Identity) async throws -> Report {
        try await database.transaction { connection in
            try Self.requireActive(reporter.userId, on: connection)
            if let userId = report.userId,
                try connection.query(
                    "SELECT 1 AS known FROM users WHERE id = \(userId) AND campus = \(reporter.campus) AND deleted_at IS NULL"
                )
                .isEmpty
            {
                throw AccountError.notFound("user")
            }
            let row = try connection.query(
                """
                INSERT INTO reports (id, campus, reporter_id, user_id, listing_id, reason, detail)
                VALUES (\(UUID()), \(reporter.campus), \(reporter.userId), \(report.userId), \(report.listingId),
                    \(report.reason.rawValue), \(report.detail))
                RETURNING \(Self.reportColumns)
                """
            ).first!
            return try Report(row: row)
        }
    }

    /// The campus's reports, newest first, to one of its moderators (403 for anyone else).
    func reports(campus: String, moderatorId: UUID, limit: Int) async throws -> [Report] {
        try await database.withConnection { connection in
            try Self.checkModerator(moderatorId, campus: campus, on: connection)
            return try connection.query(
                "SELECT \(Self.reportColumns) FROM reports WHERE campus = \(campus) ORDER BY created_at DESC LIMIT \(limit)"
            ).map(Report.init(row:))
        }
    }

    /// Suspends a student of the moderator's campus: their sessions end and `user.suspended` goes out. Suspending again
    /// changes nothing.
    func suspend(_ userId: UUID, reason: String, by moderator: Identity) async throws {
        try await database.transaction { connection in
            try Self.checkModerator(moderator.userId, campus: moderator.campus, on: connection)
            guard
                let row = try connection.query(
                    "SELECT suspended_at IS NOT NULL AS suspended FROM users WHERE id = \(userId) AND campus = \(moderator.campus) AND deleted_at IS NULL FOR UPDATE"
                ).first
            else { throw AccountError.notFound("user") }
            guard try !row.decode("suspended", as: Bool.self) else { return }
            try connection.query(
                "UPDATE users SET suspended_at = now(), suspension_reason = \(reason) WHERE id = \(userId)")
            try connection.query(
                "UPDATE refresh_tokens SET revoked_at = now() WHERE user_id = \(userId) AND revoked_at IS NULL")
            try Outbox.append(UserSuspended(userId: userId, campus: moderator.campus), on: connection)
        }
    }

    /// Why a student is suspended; nil when they are not.
    func suspension(of userId: UUID) async throws -> String? {
        try await database.query(
            "SELECT suspension_reason FROM users WHERE id = \(userId) AND suspended_at IS NOT NULL"
        ).first?.decode("suspension_reason")
    }

    /// Makes the student of `email` a moderator of their campus; false when there is none.
    func makeModerator(email: String) async throws -> Bool {
        try await !database.query(
            "UPDATE users SET is_moderator = true WHERE email = \(email.lowercased()) RETURNING id"
        ).isEmpty
    }

    private static func checkModerator(_ userId: UUID, campus: String, on connection: PostgresConnection) throws {
        guard
            try !connection.query(
                "SELECT 1 AS moderator FROM users WHERE id = \(userId) AND campus = \(campus) AND is_moderator"
            ).isEmpty
        else { throw AccountError.notModerator }
    }

    private static let reportColumns: SQL = "id, reporter_id, user_id, listing_id, reason, detail, created_at"
}

extension Report {
    init(row: PostgresRow) throws {
        self.init(
            id: try row.decode("id"), reporterId: try row.decode("reporter_id"), userId: try row.decode("user_id"),
            listingId: try row.decode("listing_id"),
            reason: try ReportReason(rawValue: row.decode("reason")) ?? .other, detail: try row.decode("detail"),
            createdAt: try row.decode("created_at"))
    }
}
