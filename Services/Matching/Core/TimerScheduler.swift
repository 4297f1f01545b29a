import Foundation
import Logging
import Postgres
import ServiceLifecycle

/// What each flow does when one of its timers is due, by flow and kind, inside the transaction that holds the timer.
public struct TimerHandlers: Sendable {
    public typealias Handler = @Sendable (_ target: UUID, PostgresConnection) throws -> Void
    private var handlers: [String: Handler] = [:]

    public init() {}

    /// Runs `handler` with the target of each due timer of `flow` and `kind`.
    public mutating func on(flow: String, kind: String, _ handler: @escaping Handler) {
        handlers["\(flow)/\(kind)"] = handler
    }

    /// These and `other`'s, for a process that runs several flows.
    public func merging(_ other: TimerHandlers) -> TimerHandlers {
        var merged = self
        merged.handlers.merge(other.handlers) { $1 }
        return merged
    }

    /// A flow's handlers, one for each of its timer kinds: `due` does what a timer is due for and may answer a live
    /// frame (a position timer's), which `positions` sends. NB: sent inside the timer's transaction; a frame is only a
    /// hint, and the flow's row holds the position.
    public init<Kind: RawRepresentable & CaseIterable & Sendable>(
        flow: String, kinds: Kind.Type, positions: PositionSender,
        _ due: @escaping @Sendable (Kind, _ target: UUID, PostgresConnection) throws -> PendingFrame?
    ) where Kind.RawValue == String {
        for kind in Kind.allCases {
            on(flow: flow, kind: kind.rawValue) { target, connection in
                if let frame = try due(kind, target, connection) { positions.send(frame.payload, to: frame.receiver) }
            }
        }
    }

    func handler(flow: String, kind: String) -> Handler? {
        handlers["\(flow)/\(kind)"]
    }
}

/// The timers of every flow in one table.
public enum Timers {
    /// Adds a timer to the connection's open transaction: at `due`, the handler of `flow` and `kind` gets `target`.
    public static func add(flow: String, kind: String, target: UUID, due: Date, on connection: PostgresConnection)
        throws
    {
        try connection.enqueue(
            "INSERT INTO timers (flow, kind, target_id, due_at) VALUES (\(flow), \(kind), \(target), \(due))")
    }

    /// Works up to `limit` due timers in one transaction; rows another replica holds are skipped. Returns how many.
    public static func workDue(
        _ handlers: TimerHandlers, limit: Int = 50, on database: PostgresPool, logger: Logger
    ) async throws -> Int {
        try await database.transaction { connection in
            let due = try connection.query(
                """
                SELECT id, flow, kind, target_id FROM timers WHERE done_at IS NULL AND due_at <= now()
                ORDER BY due_at LIMIT \(limit) FOR UPDATE SKIP LOCKED
                """)
            for timer in due {
                let flow: String = try timer.decode("flow")
                let kind: String = try timer.decode("kind")
                if let handler = handlers.handler(flow: flow, kind: kind) {
                    try handler(try timer.decode("target_id"), connection)
                } else {
                    logger.error("a timer no flow handles", metadata: ["flow": "\(flow)", "kind": "\(kind)"])
                }
                try connection.query(
                    "UPDATE timers SET done_at = now() WHERE id = \(try timer.decode("id", as: Int64.self))")
            }
            return due.count
        }
    }
}

/// Works due timers of every flow. Every replica runs one; `FOR UPDATE SKIP LOCKED` gives each due timer to exactly
/// one of them, and a replica that dies mid-way leaves its timers to the others when its transaction rolls back.
public struct TimerScheduler: Service {
    let database: PostgresPool
    let handlers: TimerHandlers
    let interval: Duration
    let logger: Logger

    public init(database: PostgresPool, handlers: TimerHandlers, interval: Duration, logger: Logger) {
        self.database = database
        self.handlers = handlers
        self.interval = interval
        self.logger = logger
    }

    public func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                // Drain a backlog at once; otherwise wait for the next tick.
                while try await workDueTimers() > 0 {}
            } catch {
                logger.warning("timer scheduler failed; retrying", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: interval)
        }
    }

    /// Works up to `limit` due timers; returns how many.
    public func workDueTimers(limit: Int = 50) async throws -> Int {
        try await Timers.workDue(handlers, limit: limit, on: database, logger: logger)
    }
}
