import Foundation
import Postgres

/// Work done for many at once rather than for each: due once `interval` has passed since the first waited, or once
/// `limit` wait.
struct Gathering {
    let interval: TimeInterval
    let limit: Int
    private(set) var count = 0
    private var since: Date?

    init(interval: TimeInterval, limit: Int) {
        self.interval = interval
        self.limit = limit
    }

    var isDue: Bool {
        guard let secondsUntilDue else { return false }
        return count >= limit || secondsUntilDue == 0
    }

    /// Seconds until it is due, or nil when nothing waits.
    var secondsUntilDue: Double? {
        since.map { max(0, interval - Date().timeIntervalSince($0)) }
    }

    mutating func add(_ count: Int) {
        guard count > 0 else { return }
        self.count += count
        since = since ?? Date()
    }

    mutating func reset() {
        count = 0
        since = nil
    }
}

/// The deliveries a consumer applied and committed and has not acknowledged yet: acknowledged together, with the
/// last one's tag and every earlier one's, once 50 ms passed since the first or 64 wait.
///
/// NB: each acknowledgement of a quorum queue's message is an entry in its replicated log, as the message was; one for
/// every delivery, at the rates a campus sends, cost the broker as much as the message. A delivery committed and not
/// acknowledged when the consumer stops comes again, and the inbox drops it.
struct PendingAck {
    private var last: UInt64?
    private(set) var gathering = Gathering(interval: 0.05, limit: 64)

    mutating func add(_ tag: UInt64, count: Int) {
        last = tag
        gathering.add(count)
    }

    /// Acknowledges what waits, if anything does.
    mutating func send(_ broker: AMQPConnection, status: BrokerStatus, queue: String) throws {
        guard let last else { return }
        // NB: every earlier delivery on the channel was applied too, or settled on its own before this one.
        try broker.ack(last, andEveryEarlier: true)
        status.countConsumed(gathering.count, from: queue)
        self.last = nil
        gathering.reset()
    }
}

/// The seqs of outbox rows the broker confirmed and the relay has not marked sent yet: marked together four times a
/// second, or once 250 wait. (The relay's next batches read past them and leave them out one by one, so they are
/// kept few: with a second's worth at 200 a second, that reading cost more than the marks it saved.)
struct SentMarks {
    private(set) var seqs: [Int64] = []
    private(set) var gathering = Gathering(interval: 0.25, limit: 250)

    mutating func add(_ sent: [Int64]) {
        seqs += sent
        gathering.add(sent.count)
    }

    /// Takes the rows out of `outbox_unsent`.
    ///
    /// NB: not durable: a mark lost in a crash of the server sends its rows again, with the same message ids, which
    /// consumers' inboxes drop; waiting for the disk here held up the next batch.
    mutating func write(to database: PostgresConnection) throws {
        guard !seqs.isEmpty else { return }
        try database.transaction(durable: false) { connection in
            try connection.enqueue("DELETE FROM outbox_unsent WHERE seq = ANY(\(seqs.map(String.init))::bigint[])")
        }
        seqs.removeAll()
        gathering.reset()
    }
}
