import Contracts
import Foundation
import Messaging
import Postgres

/// Notifications' data in its own PostgreSQL database: the only file with SQL.
struct FeedPostgresRepository: Sendable {
    let database: PostgresPool

    /// An entry to append: to whose feed, of which type, the event's JSON (its `recipients` are left out) and the
    /// message that brought it.
    struct NewEntry: Sendable {
        var userId: UUID
        var type: String
        var eventJSON: String
        var messageId: UUID
    }

    /// An entry just appended: whose it is and its frame.
    struct Appended: Sendable {
        var userId: UUID
        var seq: Int64
        var frame: String
    }

    /// The statement that records the events' message ids in the inbox and appends the entries of those new to it,
    /// each user's in the order given; its rows are the entries appended (`appended`). A message, and an entry whose
    /// flow wrote a `notice`, waits for a push should no socket take it. Each user's head moves once, by the number
    /// of their entries, and the heads are locked in the order of the users' ids, so that two such statements never
    /// wait for each other in a circle. Entries of people who deleted their account are left out.
    static func append(_ entries: [NewEntry], recording events: [ReceivedEvent]) -> SQL {
        """
        WITH \(Inbox.recorded(events.map(\.messageId))), input AS (
            SELECT * FROM unnest(\(entries.map(\.userId.uuidString))::uuid[], \(entries.map(\.type))::text[],
                \(entries.map(\.eventJSON))::jsonb[], \(entries.map(\.messageId.uuidString))::uuid[])
                WITH ORDINALITY AS t(user_id, type, data, message_id, n)
            WHERE t.message_id IN (SELECT message_id FROM recorded)
                AND NOT EXISTS (SELECT 1 FROM erased_users e WHERE e.user_id = t.user_id)
        ), heads AS (
            INSERT INTO feed_heads (user_id, last_seq)
            SELECT user_id, count(*) FROM input GROUP BY user_id ORDER BY user_id
            ON CONFLICT (user_id) DO UPDATE SET last_seq = feed_heads.last_seq + excluded.last_seq
            RETURNING user_id, last_seq
        ), appended AS (
            INSERT INTO feed (user_id, seq, type, data)
            SELECT i.user_id,
                h.last_seq - count(*) OVER (PARTITION BY i.user_id) + row_number() OVER (PARTITION BY i.user_id ORDER BY i.n),
                i.type, i.data - 'recipients'
            FROM input i JOIN heads h USING (user_id)
            RETURNING user_id, seq, type, created_at, data::text AS data,
                type = \(MessageSent.type) OR data ? 'notice' AS told
        ), awaiting AS (
            INSERT INTO feed_awaiting_push (user_id, seq, created_at)
            SELECT user_id, seq, created_at FROM appended WHERE told
        )
        SELECT * FROM appended
        """
    }

    /// The entries the rows of `append`'s statement say were appended, in the order of their seqs.
    static func appended(_ rows: PostgresRows) throws -> [Appended] {
        try rows.map { row in
            let seq: Int64 = try row.decode("seq")
            return Appended(
                userId: try row.decode("user_id"), seq: seq,
                frame: FeedEntry.frame(
                    seq: seq, type: try row.decode("type"), at: try row.decode("created_at"),
                    dataJSON: try row.decode("data")))
        }.sorted { $0.seq < $1.seq }
    }

    /// The user's entries after `after`, oldest first.
    func entries(of userId: UUID, after: Int64, limit: Int) async throws -> [FeedEntry] {
        try await database.query(
            """
            SELECT seq, type, created_at, data::text AS data FROM feed
            WHERE user_id = \(userId) AND seq > \(after) ORDER BY seq LIMIT \(limit)
            """
        ).map { row in
            let seq: Int64 = try row.decode("seq")
            return FeedEntry(
                seq: seq,
                frame: FeedEntry.frame(
                    seq: seq, type: try row.decode("type"), at: try row.decode("created_at"),
                    dataJSON: try row.decode("data")))
        }
    }

    /// Records that sockets sent these entries, each user's from after `after` through `through`, so that no push
    /// goes out for them. Not durable: one lost in a crash of the server costs a needless push, not an entry.
    func markDelivered(_ ranges: [(userId: UUID, after: Int64, through: Int64)]) async throws {
        guard !ranges.isEmpty else { return }
        try await database.transaction(durable: false) { connection in
            try connection.query(
                """
                DELETE FROM feed_awaiting_push a
                USING unnest(\(ranges.map(\.userId.uuidString))::uuid[], \(ranges.map { String($0.after) })::bigint[],
                    \(ranges.map { String($0.through) })::bigint[]) AS d(user_id, after_seq, through_seq)
                WHERE a.user_id = d.user_id AND a.seq > d.after_seq AND a.seq <= d.through_seq
                """)
        }
    }

    /// Registers a device for the user, or moves it to them when another user had its token; its id, or nil for a
    /// person who deleted their account (their access token may still be valid).
    func registerDevice(userId: UUID, platform: String, token: String, p256dh: Data?, auth: Data?) async throws -> UUID?
    {
        try await database.query(
            """
            INSERT INTO devices (id, user_id, platform, token, p256dh, auth)
            SELECT \(UUID()), \(userId), \(platform), \(token), \(p256dh), \(auth)
            WHERE NOT EXISTS (SELECT 1 FROM erased_users WHERE user_id = \(userId))
            ON CONFLICT (platform, token) DO UPDATE SET user_id = excluded.user_id, p256dh = excluded.p256dh,
                auth = excluded.auth
            RETURNING id
            """
        ).first?.decode("id")
    }

    struct DeviceSummary: Sendable, Encodable {
        var id: UUID
        var platform: String
        var createdAt: Date
    }

    func devices(of userId: UUID) async throws -> [DeviceSummary] {
        try await database.query(
            "SELECT id, platform, created_at FROM devices WHERE user_id = \(userId) ORDER BY created_at, id"
        ).map {
            DeviceSummary(
                id: try $0.decode("id"), platform: try $0.decode("platform"), createdAt: try $0.decode("created_at"))
        }
    }

    /// Deletes the device when it is the user's (or any user's, without `userId`); false when there was none.
    @discardableResult
    func deleteDevice(_ id: UUID, of userId: UUID? = nil) async throws -> Bool {
        try await !database.query(
            "DELETE FROM devices WHERE id = \(id) AND (\(userId)::uuid IS NULL OR user_id = \(userId)) RETURNING id"
        ).isEmpty
    }

    /// A due push: an entry no socket took within the grace period, with the user's devices (none when the user has
    /// no device: the entry is settled all the same, so that it is never looked at again).
    struct DuePush: Sendable {
        var userId: UUID
        var seq: Int64
        var type: String
        var dataJSON: String
        /// The user's open conversations with unread messages.
        var badge: Int
        var devices: [PushDevice]
    }

    /// Claims up to `limit` due entries and takes them out of those awaiting a push before anything is sent, so that
    /// no entry is pushed twice even when several replicas run this, and the entries awaiting a push stay few however
    /// many users never register a device. An entry about a person blocked either way, or suspended, is claimed and
    /// not pushed; each push carries its user's badge: their open conversations with a message after their last read.
    func claimDuePushes(olderThan grace: TimeInterval, limit: Int = 500) async throws -> [DuePush] {
        let before = Date().addingTimeInterval(-grace)
        return try await database.transaction { connection in
            let entries = try connection.query(
                """
                WITH due AS (
                    SELECT user_id, seq FROM feed_awaiting_push WHERE created_at < \(before)
                    ORDER BY created_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
                ), claimed AS (
                    DELETE FROM feed_awaiting_push a USING due WHERE a.user_id = due.user_id AND a.seq = due.seq
                    RETURNING a.user_id, a.seq
                )
                SELECT c.user_id, c.seq, f.type, f.data::text AS data FROM claimed c JOIN feed f USING (user_id, seq)
                -- NB: again, for an entry may have changed since: one that named a person who then left is removed.
                WHERE (f.type = \(MessageSent.type) OR f.data ? 'notice')
                AND NOT EXISTS (
                    SELECT 1 FROM blocks b WHERE b.is_blocked
                        AND ((b.blocker_id = c.user_id AND f.data::text ILIKE '%' || b.blocked_id || '%')
                            OR (b.blocked_id = c.user_id AND f.data::text ILIKE '%' || b.blocker_id || '%')))
                AND NOT EXISTS (
                    -- NB: only the recently suspended: what mentions them was made before the suspension and is on
                    -- its way; nothing made later does, for every service hides them.
                    SELECT 1 FROM suspended_users s WHERE s.suspended_at > now() - interval '1 day'
                        AND f.data::text ILIKE '%' || s.user_id || '%')
                """
            )
            guard !entries.isEmpty else { return [] }
            let users = Array(Set(try entries.map { try $0.decode("user_id", as: UUID.self) }))
            var badges: [UUID: Int] = [:]
            for row in try connection.query(
                """
                SELECT t.user_id, count(*) AS badge FROM (
                    SELECT f.user_id, (f.data->>'conversationId')::uuid AS conversation_id,
                        max(f.seq) FILTER (WHERE f.type = \(MessageSent.type)) AS sent,
                        max(f.seq) FILTER (WHERE f.type = \(ConversationRead.type)) AS read,
                        (array_agg((f.data->>'unread')::int ORDER BY f.seq DESC)
                            FILTER (WHERE f.type = \(ConversationRead.type)))[1] AS unread
                    FROM feed f
                    WHERE f.user_id = ANY(\(users.map(\.uuidString))::uuid[])
                        AND f.type IN (\(MessageSent.type), \(ConversationRead.type))
                    GROUP BY 1, 2
                ) t JOIN conversations k ON k.id = t.conversation_id AND k.is_open
                WHERE t.sent > coalesce(t.read, 0) OR coalesce(t.unread, 0) > 0
                GROUP BY t.user_id
                """
            ) {
                badges[try row.decode("user_id")] = Int(try row.decode("badge", as: Int64.self))
            }
            var devices: [UUID: [PushDevice]] = [:]
            for row in try connection.query(
                "SELECT id, user_id, platform, token, p256dh, auth FROM devices WHERE user_id = ANY(\(users.map(\.uuidString))::uuid[])"
            ) {
                devices[try row.decode("user_id"), default: []].append(
                    PushDevice(
                        id: try row.decode("id"), platform: try row.decode("platform"), token: try row.decode("token"),
                        p256dh: try row.decode("p256dh"), auth: try row.decode("auth")))
            }
            return try entries.map { row in
                let userId: UUID = try row.decode("user_id")
                return DuePush(
                    userId: userId, seq: try row.decode("seq"), type: try row.decode("type"),
                    dataJSON: try row.decode("data"), badge: badges[userId] ?? 0, devices: devices[userId] ?? [])
            }
        }
    }

    /// The other members of an open conversation the user belongs to; empty for anyone else.
    func otherMembers(of conversationId: UUID, besides userId: UUID) async throws -> [UUID] {
        guard
            let row = try await database.query(
                "SELECT member_ids::text AS members FROM conversations WHERE id = \(conversationId) AND is_open AND \(userId) = ANY(member_ids)"
            ).first
        else { return [] }
        let members: String = try row.decode("members")
        return members.trimmingCharacters(in: CharacterSet(charactersIn: "{}")).split(separator: ",")
            .compactMap { UUID(uuidString: String($0)) }.filter { $0 != userId }
    }

    /// `user.deleted` purges the person: their feed, its head, their devices and their place in conversations go.
    /// Every other feed entry made before the deletion that mentions them becomes `entry.removed` with no data: an
    /// event may quote them in ways no rule can tell (free text they wrote, quoted whole), and such entries are history
    /// the sockets have delivered or no longer need; the entry stays so that the feed's seqs keep no gap, which
    /// clients and sockets rely on to know they missed nothing. Entries made after it (what the deletion closed, told to the others) were erased
    /// by their producers and stay, with `erase_person` applied all the same, as it is to the outbox. They are
    /// remembered as erased, so that nothing is appended to their feed again. Applying it again changes nothing.
    static func erase(_ deleted: UserDeleted, on connection: PostgresConnection) throws {
        let person = deleted.userId
        try connection.query("INSERT INTO erased_users (user_id) VALUES (\(person)) ON CONFLICT DO NOTHING")
        try connection.query("DELETE FROM feed WHERE user_id = \(person)")
        try connection.query("DELETE FROM feed_awaiting_push WHERE user_id = \(person)")
        try connection.query("DELETE FROM feed_heads WHERE user_id = \(person)")
        try connection.query("DELETE FROM devices WHERE user_id = \(person)")
        try connection.query(
            "UPDATE conversations SET member_ids = array_remove(member_ids, \(person)) WHERE \(person) = ANY(member_ids)"
        )
        // NB: one scan of every feed, for both kinds of entry: ids are in the JSON in any case, and entries keep no
        // index of whom they name.
        let deletedAt = Date(timeIntervalSince1970: TimeInterval(deleted.version) / 1_000_000)
        try connection.query(
            """
            UPDATE feed SET
                type = CASE WHEN created_at < \(deletedAt) THEN \(FeedEntry.removedType) ELSE type END,
                data = CASE WHEN created_at < \(deletedAt) THEN '{}'::jsonb
                    ELSE erase_person(data, \(person), \(ErasedPerson.name)) END
            WHERE data::text ILIKE \("%" + person.uuidString + "%")
            """)
        try Outbox.erase(person: person, on: connection)
    }

    /// `user.blocked` and `user.unblocked`: the latest state of the block, by version.
    static func setBlock(
        blocker: UUID, blocked: UUID, isBlocked: Bool, version: Int64, on connection: PostgresConnection
    )
        throws
    {
        try connection.query(
            """
            INSERT INTO blocks (blocker_id, blocked_id, is_blocked, version)
            VALUES (\(blocker), \(blocked), \(isBlocked), \(version))
            ON CONFLICT (blocker_id, blocked_id) DO UPDATE SET is_blocked = excluded.is_blocked, version = excluded.version
            WHERE blocks.version < excluded.version
            """)
    }

    /// `user.suspended`: the person's devices go, and nothing waits for a push to them any more.
    static func suspend(_ person: UUID, on connection: PostgresConnection) throws {
        try connection.query("INSERT INTO suspended_users (user_id) VALUES (\(person)) ON CONFLICT DO NOTHING")
        try connection.query("DELETE FROM devices WHERE user_id = \(person)")
        try connection.query("DELETE FROM feed_awaiting_push WHERE user_id = \(person)")
    }

    static func setConversation(_ id: UUID, members: [UUID], isOpen: Bool, on connection: PostgresConnection) throws {
        try connection.query(
            """
            INSERT INTO conversations (id, member_ids, is_open) VALUES (\(id), \(members.map(\.uuidString))::uuid[], \(isOpen))
            ON CONFLICT (id) DO UPDATE SET is_open = excluded.is_open AND conversations.is_open
            """)
    }
}
