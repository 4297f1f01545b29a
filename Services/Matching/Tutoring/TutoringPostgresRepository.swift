import Contracts
import Foundation
import MatchingCore
import Messaging
import Postgres
import ServiceKit

/// The tutoring flow's data in matching's database: the only file with its SQL. A swipe and the match it makes
/// commit with their events in one transaction, under a lock on the pair, so that two likes make exactly one match
/// across replicas.
public struct TutoringPostgresRepository: Sendable {
    let database: PostgresPool

    public init(database: PostgresPool) {
        self.database = database
    }

    /// What a profile holds, validated.
    public struct ProfileInput: Sendable {
        public var role: TutoringRole
        public var courses: [String]
        public var description: String
        public var rateCents: Int
        public var availability: String
        public var preferences: String

        public init(
            role: TutoringRole, courses: [String], description: String, rateCents: Int, availability: String,
            preferences: String
        ) {
            self.role = role
            self.courses = courses
            self.description = description
            self.rateCents = rateCents
            self.availability = availability
            self.preferences = preferences
        }
    }

    // MARK: Profiles

    /// Creates or replaces the caller's profile; the caller counts as active now.
    public func saveProfile(_ input: ProfileInput, caller: Identity) async throws -> TutoringProfile {
        try await database.transaction { connection in
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
            return try Self.profile(caller.userId, visibleTo: caller, on: connection)!
        }
    }

    /// A profile the caller may read in full: their own, or that of someone in an active match with them.
    public func profile(_ userId: UUID, visibleTo caller: Identity) async throws -> TutoringProfile? {
        try await database.withConnection { try Self.profile(userId, visibleTo: caller, on: $0) }
    }

    static func profile(_ userId: UUID, visibleTo caller: Identity, on connection: PostgresConnection) throws
        -> TutoringProfile?
    {
        try connection.query(
            """
            SELECT p.user_id, coalesce(u.name, p.name) AS name, u.photo_id, u.bio, p.role,
                array_to_string(p.courses, ',') AS courses, p.description, p.rate_cents, p.availability, p.preferences,
                p.updated_at
            FROM tutoring_profiles p LEFT JOIN users u ON u.id = p.user_id
            WHERE p.user_id = \(userId) AND p.campus = \(caller.campus)
                AND (p.user_id = \(caller.userId) OR EXISTS (
                    SELECT 1 FROM tutoring_matches m
                    WHERE m.first_id = least(\(userId)::uuid, \(caller.userId)::uuid)
                        AND m.second_id = greatest(\(userId)::uuid, \(caller.userId)::uuid) AND m.status = 'active'))
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

    // MARK: The feed

    /// Cards of the opposite role on the caller's campus who share a course (`course` when given), never the caller,
    /// never anyone the caller swiped (which includes every match); most shared courses first, then most recently
    /// active. 409 for a caller without a profile.
    public func feed(caller: Identity, course: String?, after: FeedCursor?, limit: Int) async throws -> TutoringFeed {
        try await database.withConnection { connection in
            let me = try Self.ownProfile(caller, on: connection)
            var courses = me.courses
            if let course, !courses.contains(course) { courses.append(course) }
            let cursor: SQL =
                if let after {
                    """
                    WHERE (shared, active_micros, user_id)
                        < (\(after.shared), \(after.activeAtMicroseconds), \(after.userId))
                    """
                } else { "" }
            // Ranked from the course index alone; only the page's profiles are read.
            let rows = Array(
                try connection.query(
                    """
                    WITH candidates AS (
                        SELECT c.user_id, count(*)::int AS shared,
                            (extract(epoch FROM max(c.active_at)) * 1000000)::bigint AS active_micros
                        FROM tutoring_courses c
                        WHERE c.campus = \(caller.campus) AND c.role = \(me.role.opposite.rawValue)
                            AND c.course = ANY(\(courses)::text[]) AND c.user_id <> \(caller.userId)
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
                    """))
            let mine = Set(courses)
            var cards: [TutoringCard] = []
            var next: String?
            for (index, row) in rows.enumerated() {
                guard index < limit else {
                    next =
                        FeedCursor(
                            shared: try rows[index - 1].decode("shared"),
                            activeAtMicroseconds: try rows[index - 1].decode("active_micros"),
                            userId: try rows[index - 1].decode("user_id")
                        ).text
                    break
                }
                cards.append(
                    TutoringCard(
                        userId: try row.decode("user_id"), name: try row.decode("name"),
                        photoId: try row.decode("photo_id"),
                        role: try row.decode("role"), description: try row.decode("description"),
                        courses: try Self.courses(row, "courses").map {
                            CardCourse(code: $0, shared: mine.contains($0))
                        },
                        rateCents: try row.decode("rate_cents"), availability: try row.decode("availability")))
            }
            return TutoringFeed(cards: cards, next: next)
        }
    }

    // MARK: Swipes and matches

    /// Records a like or a pass on `target`, once; a like that meets the target's like makes their match.
    public func swipe(caller: Identity, target: UUID, likes: Bool) async throws -> SwipeResult {
        try await database.transaction { connection in
            let me = try Self.ownProfile(caller, on: connection)
            guard
                let them = try connection.query(
                    """
                    SELECT coalesce(u.name, p.name) AS name, array_to_string(p.courses, ',') AS courses
                    FROM tutoring_profiles p LEFT JOIN users u ON u.id = p.user_id
                    WHERE p.user_id = \(target) AND p.campus = \(caller.campus) AND p.role = \(me.role.opposite.rawValue)
                    """
                ).first
            else { throw MatchingError.notFound("card") }
            // Both swipes of a pair take this lock, so the second sees the first and only it can make the match.
            try connection.query(
                """
                SELECT pg_advisory_xact_lock(hashtextextended(
                    least(\(target)::uuid, \(caller.userId)::uuid)::text || greatest(\(target)::uuid, \(caller.userId)::uuid)::text, 0))
                """)
            let inserted = try connection.query(
                """
                INSERT INTO tutoring_swipes (swiper_id, target_id, likes) VALUES (\(caller.userId), \(target), \(likes))
                ON CONFLICT DO NOTHING RETURNING swiper_id
                """)
            guard !inserted.isEmpty else { throw MatchingError.conflict("You already swiped on this user.") }
            try Self.markActive(caller, on: connection)
            guard likes,
                try !connection.query(
                    """
                    SELECT 1 AS liked FROM tutoring_swipes
                    WHERE swiper_id = \(target) AND target_id = \(caller.userId) AND likes
                    """
                ).isEmpty
            else { return SwipeResult(matched: false, matchId: nil) }
            let theirCourses = Set(try Self.courses(them, "courses"))
            let shared = me.courses.filter(theirCourses.contains)
            let members = [
                MatchMember(userId: caller.userId, name: caller.name, role: me.role.rawValue),
                MatchMember(userId: target, name: try them.decode("name"), role: me.role.opposite.rawValue),
            ].sorted { $0.userId.uuidString.lowercased() < $1.userId.uuidString.lowercased() }
            let matchId = UUID()
            try connection.query(
                """
                INSERT INTO tutoring_matches (id, campus, first_id, second_id, first_role, second_role, courses, status)
                VALUES (\(matchId), \(caller.campus), \(members[0].userId), \(members[1].userId), \(members[0].role),
                    \(members[1].role), \(shared)::text[], 'active')
                """)
            try Outbox.append(
                TutoringMatched(matchId: matchId, campus: caller.campus, members: members, courses: shared, version: 1),
                on: connection)
            try FlowMatch(
                id: matchId, flow: TutoringFlow.name, campus: caller.campus, members: members,
                subject: TutoringRules.subject(courses: shared)
            ).announceOpened(on: connection)
            return SwipeResult(matched: true, matchId: matchId)
        }
    }

    /// The caller's active matches, newest first.
    public func matches(of caller: Identity) async throws -> [TutoringMatch] {
        try await database.query(
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

    /// Ends the caller's active match: both are told, the chat closes; the pair never meets in the feed again
    /// (each swiped the other).
    public func unmatch(_ matchId: UUID, caller: Identity) async throws {
        try await database.transaction { connection in
            guard
                let row = try connection.query(
                    """
                    UPDATE tutoring_matches SET status = 'unmatched', unmatched_by = \(caller.userId), version = version + 1
                    WHERE id = \(matchId) AND status = 'active'
                        AND (first_id = \(caller.userId) OR second_id = \(caller.userId))
                    RETURNING campus, first_id, second_id, first_role, second_role, version
                    """
                ).first
            else { throw MatchingError.notFound("match") }
            let version: Int64 = try row.decode("version")
            let members = [
                MatchMember(userId: try row.decode("first_id"), name: "", role: try row.decode("first_role")),
                MatchMember(userId: try row.decode("second_id"), name: "", role: try row.decode("second_role")),
            ]
            try Outbox.append(
                TutoringUnmatched(
                    matchId: matchId, unmatchedBy: caller.userId, memberIds: members.map(\.userId), version: version),
                on: connection)
            try FlowMatch(
                id: matchId, flow: TutoringFlow.name, campus: try row.decode("campus"), members: members, subject: ""
            )
            .announceClosed(.unmatched, version: version, on: connection)
        }
    }

    // MARK: Rows

    /// The caller was active now (the feed ranks by it); written at most once a minute.
    static func markActive(_ caller: Identity, on connection: PostgresConnection) throws {
        try connection.query(
            """
            UPDATE tutoring_courses SET active_at = now()
            WHERE user_id = \(caller.userId) AND active_at < now() - interval '1 minute'
            """)
    }

    /// The caller's role and courses; 409 naming the fix when they have no profile.
    static func ownProfile(_ caller: Identity, on connection: PostgresConnection) throws -> (
        role: TutoringRole, courses: [String]
    ) {
        guard
            let row = try connection.query(
                """
                SELECT role, array_to_string(courses, ',') AS courses FROM tutoring_profiles
                WHERE user_id = \(caller.userId) AND campus = \(caller.campus)
                """
            ).first
        else {
            throw MatchingError.conflict(
                "You have no tutoring profile yet; create one with PUT /v1/tutoring/profile (your role and courses).")
        }
        return (try row.decode("role"), try courses(row, "courses"))
    }

    /// Normalised course codes have no comma, so the array travels as one joined text.
    static func courses(_ row: PostgresRow, _ column: String) throws -> [String] {
        try row.decode(column, as: String.self).split(separator: ",").map(String.init)
    }
}
