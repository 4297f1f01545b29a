import Foundation
import NIOConcurrencyHelpers
import Postgres

/// Outbox rows this process's own statements just committed, handed to its relay in process while that relay is the
/// active one, so that it publishes them without a NOTIFY and a read of the outbox. At a message a moment (a chat
/// message at the rates a campus sends) those were, for every row, a signal and a wake-up of the relay's PostgreSQL
/// backend, a wake-up of the relay, and a statement with its round trip.
///
/// A statement asks for a `ticket` before it is sent. While this process's relay is not the active one, the ticket
/// says to NOTIFY, as every other outbox row does, and the relay of whichever replica is active reads the row. Else
/// the statement does not NOTIFY and hands its rows once committed. A relay that stops being active takes nothing
/// more and drops what it held: those rows are in `outbox_unsent`, and the next active relay reads them when it
/// starts (another replica's within its poll of a second, since nothing woke it).
///
/// Order: a sender's next message is sent only after the first was committed. When the first was not handed (its
/// ticket given before the relay became active, or in an earlier term of it), its commit asks the relay to read the
/// outbox before it publishes anything handed after it, so that the second never overtakes it; and what a read finds
/// is published with what was handed in one batch, in seq order (a read may find a row committed and not handed yet).
public final class OutboxHandOff: Sendable {
    /// A committed outbox row, as the relay publishes it.
    public struct Row: Sendable {
        var seq: Int64
        var id: UUID
        var type: String
        var schemaVersion: Int
        var payload: String
        var traceparent: String?
        var createdAt: Date
        /// Another exchange and routing key than the service's own and the type; never for a row handed.
        var exchange: String? = nil
        var routingKey: String? = nil
    }

    /// Whether a statement NOTIFYs or hands its rows, and to which term of the relay's activity.
    public struct Ticket: Sendable {
        fileprivate let term: Int?
        /// The statement wakes the relay with a NOTIFY on commit (`Outbox.commonTableExpressions`).
        public var notifies: Bool { term == nil }
    }

    private struct State {
        var term = 0
        var isActive = false
        var rows: [Row] = []
        var mustRead = false
    }

    private let state = NIOLockedValueBox(State())
    /// A pipe's ends: readable while rows wait, so that the relay polls it beside its PostgreSQL connection.
    let descriptor: Int32
    private let wakeUp: Int32

    public init() {
        var ends: [Int32] = [-1, -1]
        precondition(pipe(&ends) == 0, "no pipe for the outbox hand-off: \(String(cString: strerror(errno)))")
        for end in ends {
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        (descriptor, wakeUp) = (ends[0], ends[1])
    }

    deinit {
        close(descriptor)
        close(wakeUp)
    }

    public func ticket() -> Ticket {
        state.withLockedValue { Ticket(term: $0.isActive ? $0.term : nil) }
    }

    /// After the statement of `ticket` committed: hands its outbox rows, the columns `Outbox.handedColumns` named in
    /// `rows`, to the relay, or asks it to read before what it is handed next.
    public func committed(_ ticket: Ticket, rows: [PostgresRow], type: String, schemaVersion: Int) {
        let handed = try? rows.map { row in
            Row(
                seq: try row.decode("outbox_seq"), id: try row.decode("outbox_id"), type: type,
                schemaVersion: schemaVersion, payload: try row.decode("outbox_payload"),
                traceparent: try row.decode("outbox_traceparent"), createdAt: try row.decode("outbox_created_at"))
        }
        let wakes = state.withLockedValue { state in
            // NB: a row not handed (it NOTIFYs, or the relay that was active when its ticket was given has stopped
            // since) waits for a relay's read, which must come before what is handed after it.
            guard let handed, ticket.term != nil, state.isActive, state.term == ticket.term else {
                state.mustRead = true
                return false
            }
            state.rows += handed
            return !handed.isEmpty && state.rows.count == handed.count
        }
        if wakes {
            var byte: UInt8 = 1
            _ = write(wakeUp, &byte, 1)
        }
    }

    /// The relay became active: statements from now on hand it their rows.
    func activate() {
        state.withLockedValue { state in
            state.term += 1
            state.isActive = true
        }
    }

    /// The relay stopped being active; what it held stays in `outbox_unsent` for the next one.
    func deactivate() {
        state.withLockedValue { state in
            state.isActive = false
            state.rows.removeAll()
        }
    }

    /// The rows handed since the last take, and whether the outbox must be read before they are published.
    func take() -> (rows: [Row], mustRead: Bool) {
        var bytes = [UInt8](repeating: 0, count: 64)
        while read(descriptor, &bytes, bytes.count) == bytes.count {}
        return state.withLockedValue { state in
            defer {
                state.rows.removeAll()
                state.mustRead = false
            }
            return (state.rows, state.mustRead)
        }
    }
}

/// The seqs the relay's reads published lately: a statement hands its row a moment after its commit, and a read in
/// that moment publishes the row as well; the copy handed then is dropped here rather than sent again (a consumer's
/// inbox would drop it). Kept ten seconds.
struct ReadLately {
    private var seqs: [Int64: Date] = [:]
    private static let kept: TimeInterval = 10

    mutating func add(_ read: [Int64]) {
        let now = Date()
        seqs = seqs.filter { now.timeIntervalSince($0.value) < Self.kept }
        for seq in read { seqs[seq] = now }
    }

    func notAmong(_ rows: [OutboxHandOff.Row]) -> [OutboxHandOff.Row] {
        seqs.isEmpty ? rows : rows.filter { seqs[$0.seq] == nil }
    }
}
