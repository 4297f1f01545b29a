import Contracts
import Foundation
import MatchingCore
import Postgres
import ServiceKit

/// The tutoring flow's SQL and row decoding, on one connection (inside the steps' transaction): reads, locks and
/// writes, each one statement or a small fixed group, with no decisions of their own.
struct TutoringPostgresRepository {
    let connection: PostgresConnection

    // MARK: Profiles

    /// Creates or replaces the caller's profile and the courses the feed ranks by; the caller counts as active now.
    func saveProfile(_ input: TutoringProfileInput, caller: Identity) throws {
        try connection.query(
            """
            INSERT INTO tutoring_profiles
                (user_id, campus, name, role, courses, description, rate_cents, availability, preferences)
            VALUES (\(caller.userId), \(caller.campus), \(caller.name), \(input.role.rawValue), \(input.courses)::text[],
                \(input.description), \(input.rateCents), \(input.availability), \(input.preferences))
            ON CONFLICT (user_id) DO UPDATE SET campus = excluded.campus, name = excluded.name, role = excluded.role,
                courses = excluded.courses, description = excluded.description, rate_cents = excluded.rate_cents,
                availability = excluded.availability, preferences = excluded.preferences,
                updated_at = now()
            """)
        try connection.query("DELETE FROM tutoring_courses WHERE user_id = \(caller.userId)")
        try connection.query(
            """
            INSERT INTO tutoring_courses (user_id, course, campus, role, active_at)
            SELECT \(caller.userId), course, \(caller.campus), \(input.role.rawValue), now()
            FROM unnest(\(input.courses)::text[]) AS course
            """)
    }

    /// Erases a student who deleted their account: their profile with its courses, which held their name and what
    /// they wrote, and their swipes either way. Their matches, which hold ids and course codes alone, stay.
    func erase(_ userId: UUID) throws {
        try connection.query("DELETE FROM tutoring_profiles WHERE user_id = \(userId)")
        try connection.query("DELETE FROM tutoring_swipes WHERE swiper_id = \(userId) OR target_id = \(userId)")
    }

    /// A profile of the caller's campus in full, when it is the caller's own or that of someone in an active match
    /// with them and in no block with them.
    func profile(_ userId: UUID, visibleTo caller: Identity) throws -> TutoringProfile? {
        try connection.query(
            """
            SELECT p.user_id, coalesce(u.name, p.name) AS name, u.photo_id, u.bio, p.role,
                array_to_string(p.courses, ',') AS courses, p.description, p.rate_cents, p.availability, p.preferences,
                p.updated_at
            FROM tutoring_profiles p LEFT JOIN users u ON u.id = p.user_id
            WHERE p.user_id = \(userId) AND p.campus = \(caller.campus)
                AND (p.user_id = \(caller.userId) OR (
                    \(ReadModels.unblocked("p.user_id", "\(caller.userId)::uuid")) AND EXISTS (
                        SELECT 1 FROM tutoring_matches m
                        WHERE m.first_id = least(\(userId)::uuid, \(caller.userId)::uuid)
                            AND m.second_id = greatest(\(userId)::uuid, \(caller.userId)::uuid)
                            AND m.status = 'active')))
            """
        ).first.map { row in
            TutoringProfile(
                userId: try row.decode("user_id"), name: try row.decode("name"), photoId: try row.decode("photo_id"),
                bio: try row.decode("bio"), role: try row.decode("role"), courses: try Self.courses(row, "courses"),
                description: try row.decode("description"), rateCents: try row.decode("rate_cents"),
                availability: try row.decode("availability"), preferences: try row.decode("preferences"),
                updatedAt: try row.decode("updated_at"))
        }
    }

    /// Someone with a profile on `campus`, as a swipe sees them.
    func swiper(_ userId: UUID, campus: String) throws -> Swiper? {
        try connection.query(
            """
            SELECT coalesce(u.name, p.name) AS name, p.role, array_to_string(p.courses, ',') AS courses
            FROM tutoring_profiles p LEFT JOIN users u ON u.id = p.user_id
            WHERE p.user_id = \(userId) AND p.campus = \(campus)
            """
        ).first.map { row in
            Swiper(
                userId: userId, name: try row.decode("name"), role: try row.decode("role"),
                courses: try Self.courses(row, "courses"))
        }
    }

    /// The caller was active now (the feed ranks by it); written at most once a minute.
    func markActive(_ caller: Identity) throws {
        try connection.query(
            """
            UPDATE tutoring_courses SET active_at = now()
            WHERE user_id = \(caller.userId) AND active_at < now() - interval '1 minute'
            """)
    }

    // MARK: The feed

    /// Up to `limit + 1` cards of `role` on the caller's campus who share one of `courses` (and `course` when given)
    /// and whom the caller has not swiped nor is in a block with, after `after`; ranked from the course index alone, and only the page's
    /// profiles are read. Each card with its ranks.
    func feedPage(
        caller: Identity, role: TutoringRole, courses: [String], course: String?, after: FeedCursor?, limit: Int
    ) throws -> [(card: TutoringCard, cursor: FeedCursor)] {
        let cursor: SQL =
            if let after {
                """
                WHERE (shared, active_micros, user_id)
                    < (\(after.shared), \(after.activeAtMicroseconds), \(after.userId))
                """
            } else { "" }
        let mine = Set(courses)
        return try connection.query(
            """
            WITH candidates AS (
                SELECT c.user_id, count(*)::int AS shared,
                    (extract(epoch FROM max(c.active_at)) * 1000000)::bigint AS active_micros
                FROM tutoring_courses c
                WHERE c.campus = \(caller.campus) AND c.role = \(role.rawValue)
                    AND c.course = ANY(\(courses)::text[]) AND c.user_id <> \(caller.userId)
                    AND \(ReadModels.unblocked("c.user_id", "\(caller.userId)::uuid"))
                    AND NOT EXISTS (
                        SELECT 1 FROM tutoring_swipes s
                        WHERE s.swiper_id = \(caller.userId) AND s.target_id = c.user_id)
                GROUP BY c.user_id
                HAVING \(course)::text IS NULL OR bool_or(c.course = \(course))
            ), page AS (
                SELECT * FROM candidates
                \(cursor)
                ORDER BY shared DESC, active_micros DESC, user_id DESC
                LIMIT \(limit + 1)
            )
            SELECT p.user_id, coalesce(u.name, p.name) AS name, u.photo_id, p.role, p.description,
                array_to_string(p.courses, ',') AS courses, p.rate_cents, p.availability, page.shared,
                page.active_micros
            FROM page JOIN tutoring_profiles p ON p.user_id = page.user_id LEFT JOIN users u ON u.id = p.user_id
            ORDER BY page.shared DESC, page.active_micros DESC, page.user_id DESC
            """
        ).map { row in
            (
                TutoringCard(
                    userId: try row.decode("user_id"), name: try row.decode("name"),
                    photoId: try row.decode("photo_id"), role: try row.decode("role"),
                    description: try row.decode("description"),
                    courses: try Self.courses(row, "courses").map { CardCourse(code: $0, shared: mine.contains($0)) },
                    rateCents: try row.decode("rate_cents"), availability: try row.decode("availability")),
                FeedCursor(
                    shared: try row.decode("shared"), activeAtMicroseconds: try row.decode("active_micros"),
                    userId: try row.decode("user_id"))
            )
        }
    }

    // MARK: Swipes and matches

    /// Takes the lock both swipes of a pair take, for the rest of the transaction.
    func lockPair(_ first: UUID, _ second: UUID) throws {
        try connection.query(
            """
            SELECT pg_advisory_xact_lock(hashtextextended(
                least(\(first)::uuid, \(second)::uuid)::text || greatest(\(first)::uuid, \(second)::uuid)::text, 0))
            """)
    }

    /// Records a swipe unless the swiper swiped on the target before; whether it did.
    func insertSwipe(by swiperId: UUID, on targetId: UUID, likes: Bool) throws -> Bool {
        try !connection.query(
            """
            INSERT INTO tutoring_swipes (swiper_id, target_id, likes) VALUES (\(swiperId), \(targetId), \(likes))
            ON CONFLICT DO NOTHING RETURNING swiper_id
            """
        ).isEmpty
    }

    func likes(_ swiperId: UUID, _ targetId: UUID) throws -> Bool {
        try !connection.query(
            "SELECT 1 AS liked FROM tutoring_swipes WHERE swiper_id = \(swiperId) AND target_id = \(targetId) AND likes"
        ).isEmpty
    }

    /// An active match of two members (in the order of their ids) on `campus`.
    func insertMatch(_ id: UUID, campus: String, members: [MatchMember], courses: [String]) throws {
        try connection.query(
            """
            INSERT INTO tutoring_matches (id, campus, first_id, second_id, first_role, second_role, courses, status)
            VALUES (\(id), \(campus), \(members[0].userId), \(members[1].userId), \(members[0].role),
                \(members[1].role), \(courses)::text[], 'active')
            """)
    }

    /// The caller's active matches, newest first.
    func matches(of caller: Identity) throws -> [TutoringMatch] {
        try connection.query(
            """
            SELECT x.id, x.created_at, x.courses, x.other_id, x.other_role, coalesce(u.name, p.name) AS name, u.photo_id
            FROM (
                SELECT id, created_at, array_to_string(courses, ',') AS courses,
                    CASE WHEN first_id = \(caller.userId) THEN second_id ELSE first_id END AS other_id,
                    CASE WHEN first_id = \(caller.userId) THEN second_role ELSE first_role END AS other_role
                FROM tutoring_matches
                WHERE (first_id = \(caller.userId) OR second_id = \(caller.userId)) AND status = 'active'
            ) x
            JOIN tutoring_profiles p ON p.user_id = x.other_id LEFT JOIN users u ON u.id = x.other_id
            ORDER BY x.created_at DESC
            """
        ).map { row in
            TutoringMatch(
                id: try row.decode("id"), userId: try row.decode("other_id"), name: try row.decode("name"),
                photoId: try row.decode("photo_id"), role: try row.decode("other_role"),
                courses: try Self.courses(row, "courses"), createdAt: try row.decode("created_at"))
        }
    }

    /// A match of the caller's locked for a change: its campus, its members (without names) and its status.
    func lockMatch(_ id: UUID, caller: Identity) throws
        -> (campus: String, members: [MatchMember], status: TutoringMatchStatus)?
    {
        try connection.query(
            """
            SELECT campus, first_id, second_id, first_role, second_role, status FROM tutoring_matches
            WHERE id = \(id) AND (first_id = \(caller.userId) OR second_id = \(caller.userId))
            FOR UPDATE
            """
        ).first.map(Self.lockedMatch)
    }

    /// A locked match's campus, members (without names) and status.
    private static func lockedMatch(_ row: PostgresRow) throws
        -> (campus: String, members: [MatchMember], status: TutoringMatchStatus)
    {
        (
            try row.decode("campus"),
            [
                MatchMember(userId: try row.decode("first_id"), name: "", role: try row.decode("first_role")),
                MatchMember(userId: try row.decode("second_id"), name: "", role: try row.decode("second_role")),
            ],
            try row.decode("status")
        )
    }

    /// The active match of two students, either way round, locked for a change.
    func lockActiveMatch(between a: UUID, _ b: UUID) throws
        -> (id: UUID, match: (campus: String, members: [MatchMember], status: TutoringMatchStatus))?
    {
        try connection.query(
            """
            SELECT id, campus, first_id, second_id, first_role, second_role, status FROM tutoring_matches
            WHERE first_id = least(\(a)::uuid, \(b)::uuid) AND second_id = greatest(\(a)::uuid, \(b)::uuid)
                AND status = 'active'
            FOR UPDATE
            """
        ).first.map { row in
            (try row.decode("id"), try Self.lockedMatch(row))
        }
    }

    /// Writes a match's new status and who changed it; its new version.
    func setMatchStatus(_ id: UUID, _ status: TutoringMatchStatus, by userId: UUID) throws -> Int64 {
        try connection.query(
            """
            UPDATE tutoring_matches SET status = \(status.rawValue), unmatched_by = \(userId), version = version + 1
            WHERE id = \(id)
            RETURNING version
            """
        ).first!.decode("version")
    }

    /// Normalised course codes have no comma, so the array travels as one joined text.
    static func courses(_ row: PostgresRow, _ column: String) throws -> [String] {
        try row.decode(column, as: String.self).split(separator: ",").map(String.init)
    }
}

extension TutoringRole: PostgresDecodable {
    public init?(postgresText: String) { self.init(rawValue: postgresText) }
}

extension TutoringMatchStatus: PostgresDecodable {
    init?(postgresText: String) { self.init(rawValue: postgresText) }
}
