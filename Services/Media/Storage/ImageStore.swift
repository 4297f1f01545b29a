import Foundation
import Postgres

/// One of the forms media keeps of an image.
public enum ImageVariant: String, CaseIterable, Sendable {
    /// Upright, as large as uploaded, without metadata.
    case original
    /// At most 1280 pixels wide.
    case large
    /// At most 320 pixels wide.
    case small
}

/// Where images' bytes live. PostgreSQL holds them today; an object store can take its place behind this, while
/// who owns what stays in media's tables.
public protocol ImageStore: Sendable {
    /// Keeps every variant of one image; putting the same image again replaces it.
    func put(_ variants: [ImageVariant: Data], of mediaId: UUID) async throws
    /// One variant's bytes, or nil when there are none.
    func get(_ variant: ImageVariant, of mediaId: UUID) async throws -> Data?
    /// Forgets every variant of an image.
    func delete(_ mediaId: UUID) async throws
}

/// The image store in media's own database: one bytea row per variant.
public struct PostgresImageStore: ImageStore {
    let database: PostgresPool

    public init(database: PostgresPool) {
        self.database = database
    }

    public func put(_ variants: [ImageVariant: Data], of mediaId: UUID) async throws {
        try await database.transaction { connection in
            for (variant, bytes) in variants {
                try connection.query(
                    """
                    INSERT INTO image_blobs (media_id, variant, bytes) VALUES (\(mediaId), \(variant.rawValue), \(bytes))
                    ON CONFLICT (media_id, variant) DO UPDATE SET bytes = excluded.bytes
                    """)
            }
        }
    }

    public func get(_ variant: ImageVariant, of mediaId: UUID) async throws -> Data? {
        try await database.withConnection { connection in
            try connection.query(
                "SELECT bytes FROM image_blobs WHERE media_id = \(mediaId) AND variant = \(variant.rawValue)"
            ).first.map { try $0.decode("bytes") }
        }
    }

    public func delete(_ mediaId: UUID) async throws {
        try await database.withConnection { connection in try Self.delete([mediaId], on: connection) }
    }

    /// Forgets every variant of these images in the connection's open transaction, for a change that removes
    /// their records in the same one.
    static func delete(_ mediaIds: [UUID], on connection: PostgresConnection) throws {
        guard !mediaIds.isEmpty else { return }
        try connection.query(
            "DELETE FROM image_blobs WHERE media_id = ANY(\(mediaIds.map(\.uuidString))::uuid[])")
    }
}
