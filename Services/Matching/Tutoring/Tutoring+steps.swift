import Contracts
import Foundation
import MatchingCore
import Messaging
import Postgres
import ServiceKit

/// The tutoring flow's use cases: each one transaction that locks what it changes, asks the rules
/// (`TutoringStates`), writes through `TutoringPostgresRepository`, and appends its events. NB: both swipes of a pair
/// take the pair's lock, so that two likes make exactly one match across replicas.
public struct TutoringSteps: Sendable {
    let database: PostgresPool

    public init(database: PostgresPool) {
        self.database = database
    }

    private func transaction<T: Sendable>(_ body: @escaping @Sendable (TutoringPostgresRepository) throws -> T)
        async throws -> T
    {
        try await database.transaction { try body(TutoringPostgresRepository(connection: $0)) }
    }

    private func read<T: Sendable>(_ body: @escaping @Sendable (TutoringPostgresRepository) throws -> T)
        async throws -> T
    {
        try await database.withConnection { try body(TutoringPostgresRepository(connection: $0)) }
    }

    // MARK: Profiles

    /// Creates or replaces the caller's profile; the caller counts as active now.
    public func saveProfile(_ input: TutoringProfileInput, caller: Identity) async throws -> TutoringProfile {
        try await transaction { rows in
            try ReadModels.requireActive(caller.userId, on: rows.connection)
            try rows.saveProfile(input, caller: caller)
            return try rows.profile(caller.userId, visibleTo: caller)!
        }
    }

    /// A profile the caller may read in full: their own, or that of someone in an active match with them.
    public func profile(_ userId: UUID, visibleTo caller: Identity) async throws -> TutoringProfile? {
        try await read { try $0.profile(userId, visibleTo: caller) }
    }

    // MARK: The feed

    /// Cards of the opposite role on the caller's campus who share a course (`course` when given), never the caller,
    /// never anyone the caller swiped (which includes every match); most shared courses first, then most recently
    /// active. 409 for a caller without a profile.
    public func feed(caller: Identity, course: String?, after: FeedCursor?, limit: Int) async throws -> TutoringFeed {
        try await read { rows in
            let me = try Self.ownProfile(caller, rows: rows)
            var courses = me.courses
            if let course, !courses.contains(course) { courses.append(course) }
            let found = try rows.feedPage(
                caller: caller, role: me.role.opposite, courses: courses, course: course, after: after, limit: limit)
            return TutoringFeed(
                cards: found.prefix(limit).map(\.card),
                next: found.count > limit ? found[limit - 1].cursor.text : nil)
        }
    }

    // MARK: Swipes and matches

    /// Records a like or a pass on `target`, once; a like that meets the target's like makes their match.
    public func swipe(caller: Identity, target: UUID, likes: Bool) async throws -> SwipeResult {
        try await transaction { rows in
            let me = try Self.ownProfile(caller, rows: rows)
            guard let them = try rows.swiper(target, campus: caller.campus) else {
                throw MatchingError.notFound("card")
            }
            try TutoringRules.requireSwipable(them, by: me)
            try rows.lockPair(caller.userId, target)
            // NB: read under the pair's lock, which a block's closing takes too: a block either stops this swipe or
            // closes the match it makes.
            guard try !ReadModels.isBlocked(caller.userId, target, on: rows.connection) else {
                throw MatchingError.notFound("card")
            }
            guard try rows.insertSwipe(by: caller.userId, on: target, likes: likes) else {
                throw MatchingError.conflict("You already swiped on this user.")
            }
            try rows.markActive(caller)
            guard
                let match = TutoringRules.match(
                    of: me, with: them, likes: likes, isLikedBack: try likes && rows.likes(target, caller.userId))
            else { return SwipeResult(matched: false, matchId: nil) }
            let matchId = UUID()
            try rows.insertMatch(matchId, campus: caller.campus, members: match.members, courses: match.courses)
            try Outbox.append(
                TutoringMatched(
                    matchId: matchId, campus: caller.campus, members: match.members, courses: match.courses,
                    version: 1),
                on: rows.connection)
            try FlowMatch(
                id: matchId, flow: TutoringFlow.name, campus: caller.campus, members: match.members,
                subject: TutoringRules.subject(courses: match.courses)
            ).announceOpened(on: rows.connection)
            return SwipeResult(matched: true, matchId: matchId)
        }
    }

    /// The caller's active matches, newest first.
    public func matches(of caller: Identity) async throws -> [TutoringMatch] {
        try await read { try $0.matches(of: caller) }
    }

    /// Ends the caller's active match: both are told, the chat closes; the pair never meets in the feed again
    /// (each swiped the other).
    public func unmatch(_ matchId: UUID, caller: Identity) async throws {
        try await transaction { rows in
            guard let match = try rows.lockMatch(matchId, caller: caller) else { throw MatchingError.notFound("match") }
            try Self.end(matchId, match, as: .unmatched, by: caller.userId, rows: rows)
        }
    }

    /// One of two students blocked the other (`a` the blocker): their active match ends as an unmatch does, with
    /// `match.closed` reason `blocked`, in the transaction of the block's event.
    static func closeBetween(_ a: UUID, _ b: UUID, rows: TutoringPostgresRepository) throws {
        try rows.lockPair(a, b)
        guard let active = try rows.lockActiveMatch(between: a, b) else { return }
        try end(active.id, active.match, as: .blocked, by: a, rows: rows)
    }

    /// Ends a locked match `by` one of its members: both are told (`tutoring.unmatched`), and `match.closed` with
    /// `ending` closes the chat.
    private static func end(
        _ matchId: UUID, _ match: (campus: String, members: [MatchMember], status: TutoringMatchStatus),
        as ending: FlowMatch.Ending, by userId: UUID, rows: TutoringPostgresRepository
    ) throws {
        let version = try rows.setMatchStatus(matchId, try match.status.after(.unmatch), by: userId)
        try Outbox.append(
            TutoringUnmatched(
                matchId: matchId, unmatchedBy: userId, memberIds: match.members.map(\.userId), version: version),
            on: rows.connection)
        try FlowMatch(id: matchId, flow: TutoringFlow.name, campus: match.campus, members: match.members, subject: "")
            .announceClosed(ending, version: version, on: rows.connection)
    }

    /// The caller as a swiper; 409 naming the fix when they have no profile.
    private static func ownProfile(_ caller: Identity, rows: TutoringPostgresRepository) throws -> Swiper {
        guard var me = try rows.swiper(caller.userId, campus: caller.campus) else {
            throw MatchingError.conflict(
                "You have no tutoring profile yet; create one with PUT /v1/tutoring/profile (your role and courses).")
        }
        me.name = caller.name
        return me
    }
}
