import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// The entries sockets have sent, written a few times a second in one statement rather than once per frame: a
/// write per frame cost PostgreSQL more than the entry itself. An entry is marked within `interval`, well inside
/// the grace period before its push.
final class DeliveryMarks: Service, Sendable {
    let repository: FeedPostgresRepository
    let interval: Duration
    let logger: Logger
    /// By user: the range of seqs sent since the last write.
    private let pending = NIOLockedValueBox<[UUID: (after: Int64, through: Int64)]>([:])

    init(repository: FeedPostgresRepository, interval: Duration = .milliseconds(200), logger: Logger) {
        self.repository = repository
        self.interval = interval
        self.logger = logger
    }

    /// Records that a socket of `userId` sent the entries after `after` through `through`.
    func mark(_ userId: UUID, after: Int64, through: Int64) {
        guard through > after else { return }
        pending.withLockedValue { pending in
            let held = pending[userId] ?? (after, through)
            pending[userId] = (min(held.after, after), max(held.through, through))
        }
    }

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            try? await Task.sleep(for: interval)
            await write()
        }
        await write()
    }

    private func write() async {
        let ranges = pending.withLockedValue { pending in
            defer { pending.removeAll() }
            return pending.map { (userId: $0.key, after: $0.value.after, through: $0.value.through) }
        }
        do {
            try await repository.markDelivered(ranges)
        } catch {
            // NB: not retried: an entry left unmarked is pushed as well, which is only a courtesy too many.
            logger.warning("marking entries delivered failed", metadata: ["error": "\(error)"])
        }
    }
}
