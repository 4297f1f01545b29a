import Crypto
import Foundation
import MediaImaging
import NIOPosix
import ServiceKit

/// What media does with images: checks and re-encodes an upload off the event loops, keeps its variants in the
/// store and records it; answers readers of the owner's campus; deletes for the owner.
public struct MediaLibrary: Sendable {
    /// Media's tables, applied after the outbox and inbox.
    public static let migrations = Bundle.module.url(forResource: "Migrations", withExtension: nil)!

    let repository: MediaPostgresRepository
    let store: any ImageStore
    public let limits: ImageLimits

    public init(repository: MediaPostgresRepository, store: any ImageStore, limits: ImageLimits = ImageLimits()) {
        self.repository = repository
        self.store = store
        self.limits = limits
    }

    /// Stores an upload of `owner`, a student of `campus`. A retry with the same idempotency key answers with the first image.
    public func upload(_ data: Data, owner: UUID, campus: String, idempotencyKey: String?) async throws -> (
        record: MediaRecord, isNew: Bool
    ) {
        if let idempotencyKey, let first = try await repository.image(idempotencyKey: idempotencyKey, owner: owner) {
            return (first, false)
        }
        let limits = limits
        let image: ProcessedImage
        do {
            // NB: decoding and encoding take tens of milliseconds of a core: on the shared thread pool, whose size
            // (the core count) also bounds how many images are in memory at once.
            image = try await NIOThreadPool.singleton.runIfActive { try ImageProcessor.process(data, limits: limits) }
        } catch let error as ImageError {
            throw MediaError.image(error)
        }
        let variants: [ImageVariant: Data] = [.original: image.original, .large: image.large, .small: image.small]
        let record = MediaRecord(
            id: UUID(), ownerId: owner, campus: campus, contentType: image.format.contentType,
            width: image.width, height: image.height, etags: variants.mapValues(Self.etag))
        try await store.put(variants, of: record.id)
        let stored: (record: MediaRecord, isNew: Bool)
        do {
            stored = try await repository.insert(record, idempotencyKey: idempotencyKey)
        } catch MediaError.erased {
            try await store.delete(record.id)
            throw MediaError.erased
        }
        if !stored.isNew {
            // Two uploads raced with one key: the first recorded keeps its image, this one's bytes go.
            try await store.delete(record.id)
        }
        return stored
    }

    /// An image of the reader's campus.
    public func image(_ id: UUID, campus: String) async throws -> MediaRecord {
        guard let record = try await repository.image(id, campus: campus) else { throw MediaError.notFound }
        return record
    }

    /// One variant's bytes.
    public func bytes(of record: MediaRecord, variant: ImageVariant) async throws -> Data {
        guard let bytes = try await store.get(variant, of: record.id) else { throw MediaError.notFound }
        return bytes
    }

    /// Deletes the owner's image; anyone else's is 404.
    public func delete(_ id: UUID, owner: UUID) async throws {
        guard try await repository.delete(id, owner: owner) else { throw MediaError.notFound }
        try await store.delete(id)
    }

    /// A strong ETag: the SHA-256 of the bytes, quoted.
    static func etag(_ bytes: Data) -> String {
        "\"" + SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() + "\""
    }
}
