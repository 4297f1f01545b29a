import Contracts
import Foundation
import Messaging
import Postgres
import ServiceKit

extension AccountPostgresRepository {
    /// Stores a student's report of a student of their campus (404 for anyone else) or of a listing, and answers it
    /// with `isNew`; a repeat of a report of theirs still open answers that one. Past `perDay` reports within a day,
    /// 429 with the seconds until the oldest of them is a day old.
    func report(_ report: NewReport, by reporter: Identity, perDay: Int) async throws -> (report: Report, isNew: Bool) {
        try await database.transaction { connection in
            // NB: locks the reporter's row, so that their concurrent reports count one after another.
            try Self.requireActive(reporter.userId, on: connection, locking: true)
            if let userId = report.userId,
                try connection.query(
                    "SELECT 1 AS known FROM users WHERE id = \(userId) AND campus = \(reporter.campus) AND deleted_at IS NULL"
                )
                .isEmpty
            {
                throw AccountError.notFound("user")
            }
            if let open = try connection.query(
                """
                SELECT \(Self.reportColumns) FROM reports
                WHERE reporter_id = \(reporter.userId) AND user_id IS NOT DISTINCT FROM \(report.userId)
                    AND listing_id IS NOT DISTINCT FROM \(report.listingId) AND closed_at IS NULL
                """
            ).first {
                return (try Report(row: open), false)
            }
            let today = try connection.query(
                """
                SELECT count(*) AS reports, ceil(extract(epoch FROM min(created_at) + interval '1 day' - now()))::bigint
                    AS seconds_left
                FROM reports WHERE reporter_id = \(reporter.userId) AND created_at > now() - interval '1 day'
                """
            ).first!
            if try today.decode("reports", as: Int.self) >= perDay {
                throw AccountError.throttled(
                    "You have filed \(perDay) reports today; moderators are reading them.",
                    retryAfterSeconds: max(1, try today.decode("seconds_left", as: Int.self)))
            }
            let row = try connection.query(
                """
                INSERT INTO reports (id, campus, reporter_id, user_id, listing_id, reason, detail)
                VALUES (\(UUID()), \(reporter.campus), \(reporter.userId), \(report.userId), \(report.listingId),
                    \(report.reason.rawValue), \(report.detail))
                RETURNING \(Self.reportColumns)
                """
            ).first!
            return (try Report(row: row), true)
        }
    }

    /// Closes a report of the moderator's campus (403 for anyone else); closing it again changes nothing.
    func closeReport(_ id: UUID, by moderator: Identity) async throws -> Report {
        try await database.transaction { connection in
            try Self.checkModerator(moderator.userId, campus: moderator.campus, on: connection)
            guard
                let row = try connection.query(
                    """
                    UPDATE reports SET closed_at = coalesce(closed_at, now())
                    WHERE id = \(id) AND campus = \(moderator.campus) RETURNING \(Self.reportColumns)
                    """
                ).first
            else { throw AccountError.notFound("report") }
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
            // What was reported of them is dealt with.
            try connection.query("UPDATE reports SET closed_at = now() WHERE user_id = \(userId) AND closed_at IS NULL")
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

    private static let reportColumns: SQL =
        "id, reporter_id, user_id, listing_id, reason, detail, created_at, closed_at"
}

extension Report {
    init(row: PostgresRow) throws {
        self.init(
            id: try row.decode("id"), reporterId: try row.decode("reporter_id"), userId: try row.decode("user_id"),
            listingId: try row.decode("listing_id"),
            reason: try ReportReason(rawValue: row.decode("reason")) ?? .other, detail: try row.decode("detail"),
            createdAt: try row.decode("created_at"), closedAt: try row.decode("closed_at"))
    }
}
