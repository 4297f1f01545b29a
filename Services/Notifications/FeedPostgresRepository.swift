import Contracts
import Foundation
import Messaging
import Postgres

/// Notifications' data in its own PostgreSQL database: the only file with SQL.
struct FeedPostgresRepository: Sendable {
    let database: PostgresPool

    /// Appends an entry to the user's feed and, through the outbox, sends it live to whichever replica holds the
    /// user's socket. Returns its seq.
    @discardableResult
    static func append(to userId: UUID, type: String, dataJSON: String, on connection: PostgresConnection) throws
        -> Int64
    {
        let seq: Int64 = try connection.query(
            """
            INSERT INTO feed_heads (user_id, last_seq) VALUES (\(userId), 1)
            ON CONFLICT (user_id) DO UPDATE SET last_seq = feed_heads.last_seq + 1 RETURNING last_seq
            """
        ).first!.decode("last_seq")
        let at: Date = try connection.query(
            "INSERT INTO feed (user_id, seq, type, data) VALUES (\(userId), \(seq), \(type), \(dataJSON)::jsonb) RETURNING created_at"
        ).first!.decode("created_at")
        try Outbox.append(
            json: JSONText(raw: FeedEntry.frame(seq: seq, type: type, at: at, dataJSON: dataJSON)), type: "feed.entry",
            aggregateId: userId, version: seq, exchange: FeedRouting.liveExchange,
            routingKey: FeedRouting.liveKey(userId),
            on: connection)
        return seq
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

    /// Records that a socket sent the user's entries up to `seq`, so that no push goes out for them.
    func markDelivered(_ userId: UUID, through seq: Int64) async throws {
        try await database.query(
            "UPDATE feed SET delivered_at = now() WHERE user_id = \(userId) AND seq <= \(seq) AND delivered_at IS NULL")
    }

    func registerDevice(userId: UUID, token: String, platform: String) async throws -> UUID {
        try await database.query(
            """
            INSERT INTO devices (id, user_id, token, platform) VALUES (\(UUID()), \(userId), \(token), \(platform))
            ON CONFLICT (user_id, token) DO UPDATE SET platform = excluded.platform RETURNING id
            """
        ).first!.decode("id")
    }

    /// A due push: an entry no socket took within the grace period, with the user's device tokens (none when the
    /// user has no device: the entry is settled all the same, so that it is never looked at again).
    struct DuePush: Sendable {
        var userId: UUID
        var seq: Int64
        var type: String
        var tokens: [String]
    }

    /// Claims up to `limit` due entries and marks them pushed before anything is sent, so that no entry is pushed
    /// twice even when several replicas run this, and the entries awaiting a push stay few however many users never
    /// register a device.
    func claimDuePushes(olderThan grace: TimeInterval, limit: Int = 500) async throws -> [DuePush] {
        let before = Date().addingTimeInterval(-grace)
        return try await database.transaction { connection in
            try connection.query(
                """
                WITH due AS (
                    SELECT user_id, seq FROM feed
                    WHERE delivered_at IS NULL AND pushed_at IS NULL AND created_at < \(before)
                    ORDER BY created_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
                )
                UPDATE feed f SET pushed_at = now() FROM due WHERE f.user_id = due.user_id AND f.seq = due.seq
                RETURNING f.user_id, f.seq, f.type,
                    (SELECT coalesce(json_agg(token ORDER BY token), '[]') FROM devices d WHERE d.user_id = f.user_id)::text AS tokens
                """
            ).map { row in
                let tokens: String = try row.decode("tokens")
                return DuePush(
                    userId: try row.decode("user_id"), seq: try row.decode("seq"), type: try row.decode("type"),
                    tokens: try JSONDecoder().decode([String].self, from: Data(tokens.utf8)))
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

    static func setConversation(_ id: UUID, members: [UUID], isOpen: Bool, on connection: PostgresConnection) throws {
        try connection.query(
            """
            INSERT INTO conversations (id, member_ids, is_open) VALUES (\(id), \(members.map(\.uuidString))::uuid[], \(isOpen))
            ON CONFLICT (id) DO UPDATE SET is_open = excluded.is_open AND conversations.is_open
            """)
    }
}
