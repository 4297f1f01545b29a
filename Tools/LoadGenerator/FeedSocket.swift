import Foundation
import HummingbirdWSClient
import Logging
import NIOConcurrencyHelpers

/// One entry of a user's feed as it arrived on the socket, or a live frame without seq (typing, a position).
struct FeedEvent: @unchecked Sendable {
    /// Nil for a live frame, which is no entry of the feed.
    var seq: Int64?
    var type: String
    var data: [String: Any]
    /// `Stopwatch` seconds when the frame was read.
    var receivedAt: Double
    /// Seconds from the entry's `at` (when notifications stored it; a live frame's `at` in its data) to the read,
    /// by the wall clock: the system and the generator share the machine.
    var sinceStored: Double?
}

/// A student's WebSocket on `/v1/stream`, held for the whole run and reconnected now and then with `after=` the
/// last seq seen, as the app does when the phone changes network. It checks that the feed is gapless and
/// without repeats, and hands each entry, and each live frame without seq, to `handle`.
final class FeedSocket: Sendable {
    struct Tally: Sendable {
        var lastSeq: Int64 = 0
        /// Seqs skipped: entries the socket never delivered.
        var missing: Int64 = 0
        /// Entries delivered again (seq not above the last one seen).
        var repeated = 0
        var connects = 0
        var isConnected = false
    }

    let userId: String
    private let url: @Sendable (Int64) -> String
    private let tally = NIOLockedValueBox(Tally())
    private let stopping = NIOLockedValueBox(false)
    private let handle: @Sendable (FeedEvent) -> Void
    private let measurements: Measurements
    private let logger: Logger

    init(
        userId: String, measurements: Measurements, logger: Logger, url: @escaping @Sendable (Int64) -> String,
        handle: @escaping @Sendable (FeedEvent) -> Void
    ) {
        self.userId = userId
        self.url = url
        self.measurements = measurements
        self.logger = logger
        self.handle = handle
    }

    var state: Tally { tally.withLockedValue { $0 } }

    func stop() {
        stopping.withLockedValue { $0 = true }
    }

    private var isStopping: Bool { stopping.withLockedValue { $0 } }

    /// Holds the socket until `stop()`, closing and reopening it after about `reconnectEvery` seconds when given.
    /// `connected` is called once, when the first connection is up.
    func run(reconnectEvery: Double?, connected: (@Sendable () -> Void)? = nil) async {
        let connectedOnce = NIOLockedValueBox(false)
        while !isStopping {
            let after = tally.withLockedValue { $0.lastSeq }
            let operation = after == 0 ? "WS /v1/stream (connect)" : "WS /v1/stream?after= (reconnect)"
            let start = Stopwatch.now()
            let lifetime = reconnectEvery.map { Double.random(in: $0 * 0.5...$0 * 1.5) }
            let opened = NIOLockedValueBox(false)
            do {
                try await WebSocketClient.connect(url: url(after), logger: logger) { inbound, outbound, _ in
                    opened.withLockedValue { $0 = true }
                    self.measurements.record(operation, seconds: Stopwatch.now() - start)
                    self.tally.withLockedValue {
                        $0.connects += 1
                        $0.isConnected = true
                    }
                    if !connectedOnce.withLockedValue({ $0 }) {
                        connectedOnce.withLockedValue { $0 = true }
                        connected?()
                    }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for try await message in inbound.messages(maxSize: 1 << 20) {
                                guard case .text(let text) = message else { continue }
                                self.receive(text)
                            }
                        }
                        group.addTask {
                            let closeAt = lifetime.map { start + $0 }
                            while !self.isStopping, closeAt.map({ Stopwatch.now() < $0 }) ?? true {
                                try await Task.sleep(for: .milliseconds(100))
                            }
                            try await outbound.close(.normalClosure, reason: nil)
                        }
                        // Either the server closed, or this side did and the close handshake ended the reads.
                        try await group.next()
                        group.cancelAll()
                    }
                }
            } catch {
                if !isStopping {
                    measurements.recordError(
                        opened.withLockedValue { $0 } ? "WS /v1/stream (held)" : operation, Gateway.describe(error))
                }
            }
            tally.withLockedValue { $0.isConnected = false }
            if !opened.withLockedValue({ $0 }) && !isStopping {
                try? await Task.sleep(for: .milliseconds(Int.random(in: 200...800)))
            }
        }
    }

    private func receive(_ text: String) {
        let now = Stopwatch.now()
        let wallClock = Date()
        guard let frame = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
            let type = frame["type"] as? String
        else { return }
        let data = frame["data"] as? [String: Any] ?? [:]
        func sinceStored(_ at: Any?) -> Double? {
            let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
            return (at as? String).flatMap { try? Date($0, strategy: format) }.map { wallClock.timeIntervalSince($0) }
        }
        // Typing hints and positions carry no seq: they are not part of the feed, so they pass the checks by.
        guard let seq = (frame["seq"] as? NSNumber)?.int64Value else {
            let event = FeedEvent(
                seq: nil, type: type, data: data, receivedAt: now, sinceStored: sinceStored(data["at"]))
            return handle(event)
        }
        let isNew = tally.withLockedValue { tally -> Bool in
            guard seq > tally.lastSeq else {
                tally.repeated += 1
                return false
            }
            tally.missing += seq - tally.lastSeq - 1
            tally.lastSeq = seq
            return true
        }
        guard isNew else { return }
        handle(FeedEvent(seq: seq, type: type, data: data, receivedAt: now, sinceStored: sinceStored(frame["at"])))
    }
}

/// Where a student's tasks wait for the feed entries they expect (an offer, a match): entries nobody waits for
/// yet are kept until someone asks.
final class Mailbox: Sendable {
    private struct Waiter {
        var matches: @Sendable (FeedEvent) -> Bool
        var continuation: CheckedContinuation<FeedEvent?, Never>
    }

    private struct State {
        var pending: [FeedEvent] = []
        var waiters: [UUID: Waiter] = [:]
    }

    private let state = NIOLockedValueBox(State())

    func deliver(_ event: FeedEvent) {
        let waiter = state.withLockedValue { state -> Waiter? in
            if let (key, waiter) = state.waiters.first(where: { $0.value.matches(event) }) {
                state.waiters[key] = nil
                return waiter
            }
            state.pending.append(event)
            // NB: entries nobody asked for (a late offer.expired) would pile up over a long run.
            if state.pending.count > 200 { state.pending.removeFirst(state.pending.count - 200) }
            return nil
        }
        waiter?.continuation.resume(returning: event)
    }

    /// The first entry that `matches`, waiting up to `timeout` seconds for it; nil when none came.
    func next(timeout: Double, where matches: @escaping @Sendable (FeedEvent) -> Bool) async -> FeedEvent? {
        let key = UUID()
        let timer = NIOLockedValueBox<Task<Void, Never>?>(nil)
        defer { timer.withLockedValue { $0?.cancel() } }
        return await withCheckedContinuation { continuation in
            let found = state.withLockedValue { state -> FeedEvent?? in
                if let index = state.pending.firstIndex(where: matches) {
                    return .some(state.pending.remove(at: index))
                }
                state.waiters[key] = Waiter(matches: matches, continuation: continuation)
                return nil
            }
            if let found {
                continuation.resume(returning: found)
                return
            }
            let state = self.state
            timer.withLockedValue {
                $0 = Task {
                    try? await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                    let waiter = state.withLockedValue { $0.waiters.removeValue(forKey: key) }
                    waiter?.continuation.resume(returning: nil)
                }
            }
        }
    }
}
