import Contracts
import Foundation
import Messaging
import Postgres

/// An image as media knows it, without its bytes.
public struct MediaRecord: Sendable, Equatable {
    public var id: UUID
    public var ownerId: UUID
    public var campus: String
    public var contentType: String
    public var width: Int
    public var height: Int
    /// The strong ETag of each variant, quoted.
    public var etags: [ImageVariant: String]
}

/// Media's tables: who owns which image, on which campus, and the events that tell other services. The only file
/// with media's SQL besides the image store's.
public struct MediaPostgresRepository: Sendable {
    let database: PostgresPool

    public init(database: PostgresPool) {
        self.database = database
    }

    private static let columns: SQL =
        "id, owner_id, campus, content_type, width, height, original_etag, large_etag, small_etag"

    /// Records a stored image and publishes `media.stored` with it. With an idempotency key the caller used
    /// before, nothing is recorded and the first image is the answer (`isNew` false). An owner who deleted their
    /// account records nothing (`MediaError.erased`).
    func insert(_ record: MediaRecord, idempotencyKey: String?) async throws -> (record: MediaRecord, isNew: Bool) {
        try await database.transaction { connection in
            try Self.lockOwner(record.ownerId, exclusively: false, on: connection)
            guard
                try connection.query("SELECT 1 FROM erased_owners WHERE user_id = \(record.ownerId)").isEmpty
            else { throw MediaError.erased }
            let inserted = try connection.query(
                """
                INSERT INTO media (\(Self.columns), idempotency_key)
                VALUES (\(record.id), \(record.ownerId), \(record.campus), \(record.contentType), \(record.width),
                    \(record.height), \(record.etags[.original]), \(record.etags[.large]), \(record.etags[.small]),
                    \(idempotencyKey))
                ON CONFLICT (owner_id, idempotency_key) DO NOTHING
                RETURNING id
                """)
            guard inserted.first != nil else {
                return (try Self.byIdempotencyKey(idempotencyKey!, owner: record.ownerId, on: connection)!, false)
            }
            try Outbox.append(
                MediaStored(
                    mediaId: record.id, ownerId: record.ownerId, campus: record.campus,
                    contentType: record.contentType, width: record.width, height: record.height),
                on: connection)
            return (record, true)
        }
    }

    /// The image the owner uploaded with this idempotency key, when it is still there.
    func image(idempotencyKey: String, owner: UUID) async throws -> MediaRecord? {
        try await database.withConnection { try Self.byIdempotencyKey(idempotencyKey, owner: owner, on: $0) }
    }

    /// An image students of `campus` may read.
    func image(_ id: UUID, campus: String) async throws -> MediaRecord? {
        try await database.withConnection { connection in
            try connection.query(
                "SELECT \(Self.columns) FROM media WHERE id = \(id) AND campus = \(campus) AND deleted_at IS NULL"
            ).first.map(Self.record)
        }
    }

    /// Marks the owner's image deleted (its idempotency key free again) and publishes `media.deleted`; false when
    /// it is not theirs (or gone).
    func delete(_ id: UUID, owner: UUID) async throws -> Bool {
        try await database.transaction { connection in
            guard
                try connection.query(
                    """
                    UPDATE media SET deleted_at = now(), idempotency_key = NULL
                    WHERE id = \(id) AND owner_id = \(owner) AND deleted_at IS NULL
                    RETURNING id
                    """
                ).first != nil
            else { return false }
            try Outbox.append(MediaDeleted(mediaId: id, ownerId: owner), on: connection)
            return true
        }
    }

    /// `user.deleted` removes every image of the person, each deleted one's bytes with it (`PostgresImageStore`),
    /// and publishes `media.deleted` for each they had not deleted themselves, so that read models elsewhere drop it.
    /// They are remembered as erased, so that they upload nothing more. Applying it again changes nothing.
    public static func erase(_ deleted: UserDeleted, on connection: PostgresConnection) throws {
        let owner = deleted.userId
        try lockOwner(owner, exclusively: true, on: connection)
        try connection.query("INSERT INTO erased_owners (user_id) VALUES (\(owner)) ON CONFLICT DO NOTHING")
        let removed = try connection.query(
            "DELETE FROM media WHERE owner_id = \(owner) RETURNING id, deleted_at IS NULL AS live"
        ).map { (id: try $0.decode("id", as: UUID.self), isLive: try $0.decode("live", as: Bool.self)) }
        // Also the bytes of images deleted before, which a failure between the two steps of a delete may have left.
        try PostgresImageStore.delete(removed.map(\.id), on: connection)
        for image in removed where image.isLive {
            try Outbox.append(MediaDeleted(mediaId: image.id, ownerId: owner), on: connection)
        }
    }

    /// Serialises an owner's uploads (shared) against their erasure (exclusive) until the transaction ends: an
    /// upload either commits before the erasure reads the owner's images or reads the erasure's record.
    private static func lockOwner(_ owner: UUID, exclusively: Bool, on connection: PostgresConnection) throws {
        try connection.query(
            exclusively
                ? "SELECT pg_advisory_xact_lock(hashtextextended(\(owner)::text, 0))"
                : "SELECT pg_advisory_xact_lock_shared(hashtextextended(\(owner)::text, 0))")
    }

    private static func byIdempotencyKey(_ key: String, owner: UUID, on connection: PostgresConnection) throws
        -> MediaRecord?
    {
        try connection.query(
            """
            SELECT \(columns) FROM media
            WHERE owner_id = \(owner) AND idempotency_key = \(key)
            """
        ).first.map(record)
    }

    private static func record(_ row: PostgresRow) throws -> MediaRecord {
        MediaRecord(
            id: try row.decode("id"), ownerId: try row.decode("owner_id"), campus: try row.decode("campus"),
            contentType: try row.decode("content_type"), width: try row.decode("width"),
            height: try row.decode("height"),
            etags: [
                .original: try row.decode("original_etag"), .large: try row.decode("large_etag"),
                .small: try row.decode("small_etag"),
            ])
    }
}
