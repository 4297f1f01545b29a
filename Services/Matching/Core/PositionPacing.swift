import Foundation
import Postgres

/// The pace of one match's positions to their receiver: at most one frame a second, across replicas, and
/// the latest always arrives. The row the positions belong to keeps when the last frame went (`position_sent_at`)
/// and whether a timer will send the latest (`position_pending`); a position within a second of the last frame
/// waits for that timer, due a second after the last frame, which sends whatever is latest then. Times are the
/// database's clock at the moment of deciding (not the transaction's start), and a frame handed over after its commit
/// is stamped again then (`markSent`), so that a slow transaction does not bring its frame closer to the next one.
public enum PositionPacing {
    public static let interval: TimeInterval = 1
    /// The timer kind every flow with live positions uses.
    public static let timerKind = "position"

    /// What becomes of a position that just arrived.
    public enum Decision: Equatable, Sendable {
        /// Send it now.
        case sendNow
        /// Keep it; a timer due then sends the latest.
        case sendAt(Date)
        /// Keep it; the timer already waiting sends the latest.
        case leaveToTimer
    }

    /// The decision for a position arriving `now`, after the last frame at `lastSentAt`.
    public static func decide(lastSentAt: Date?, isPending: Bool, now: Date) -> Decision {
        if isPending { return .leaveToTimer }
        guard let lastSentAt, now.timeIntervalSince(lastSentAt) < interval else { return .sendNow }
        return .sendAt(lastSentAt.addingTimeInterval(interval))
    }

    /// Decides for the row `id` of `table` (locked here) and records it: the time of a frame sent now, or the timer
    /// of `flow` that sends the latest later. Returns whether to send now.
    public static func record(table: String, id: UUID, flow: String, on connection: PostgresConnection) throws -> Bool {
        guard
            let row = try connection.query(
                """
                SELECT position_sent_at, position_pending, clock_timestamp() AS now FROM \(unescaped: table)
                WHERE id = \(id) FOR UPDATE
                """
            ).first
        else { return false }
        return try record(
            table: table, id: id, flow: flow, lastSentAt: try row.decode("position_sent_at"),
            isPending: try row.decode("position_pending"), now: try row.decode("now"), on: connection)
    }

    /// `record` for a row the caller has locked and read already: its `position_sent_at` and `position_pending`, and
    /// the database's clock since it was locked.
    public static func record(
        table: String, id: UUID, flow: String, lastSentAt: Date?, isPending: Bool, now: Date,
        on connection: PostgresConnection
    ) throws -> Bool {
        switch decide(lastSentAt: lastSentAt, isPending: isPending, now: now) {
        case .sendNow:
            try connection.query("UPDATE \(unescaped: table) SET position_sent_at = clock_timestamp() WHERE id = \(id)")
            return true
        case .sendAt(let due):
            try connection.query("UPDATE \(unescaped: table) SET position_pending = true WHERE id = \(id)")
            try Timers.add(flow: flow, kind: timerKind, target: id, due: due, on: connection)
            return false
        case .leaveToTimer:
            return false
        }
    }

    /// Records, once a frame decided in a transaction is handed over after its commit, that it went out now: the
    /// next one is a second after this moment, not after the decision. A failure here only lets the next frame follow
    /// this one a little sooner.
    public static func markSent(table: String, id: UUID, in database: PostgresPool) async {
        _ = try? await database.transaction(durable: false) { connection in
            try connection.query(
                """
                UPDATE \(unescaped: table) SET position_sent_at = greatest(position_sent_at, clock_timestamp())
                WHERE id = \(id)
                """)
        }
    }

    /// For the timer of `flow`: with the row `id` of `table` locked, takes its pending position and records it as
    /// sent now. Returns the frame `latest` reads (nil when none was pending, or the match is over). A timer
    /// that finds the last frame less than a second old (it went out later than it was decided) waits for another.
    /// NB: the row is locked before `latest` reads, so that a position committed meanwhile either is read here or
    /// finds nothing pending and waits for a timer of its own.
    public static func takePending<Frame>(
        table: String, id: UUID, flow: String, on connection: PostgresConnection, latest: () throws -> Frame?
    ) throws -> Frame? {
        guard
            let row = try connection.query(
                """
                SELECT position_pending, position_sent_at, clock_timestamp() AS now FROM \(unescaped: table)
                WHERE id = \(id) FOR UPDATE
                """
            ).first,
            try row.decode("position_pending", as: Bool.self)
        else { return nil }
        if let sentAt: Date = try row.decode("position_sent_at"),
            try row.decode("now", as: Date.self).timeIntervalSince(sentAt) < interval
        {
            try Timers.add(flow: flow, kind: timerKind, target: id, due: sentAt + interval, on: connection)
            return nil
        }
        let frame = try latest()
        try connection.query(
            """
            UPDATE \(unescaped: table) SET position_pending = false, position_sent_at = clock_timestamp()
            WHERE id = \(id)
            """)
        return frame
    }
}
