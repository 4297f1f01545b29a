import Logging
import NIOConcurrencyHelpers
import NIOPosix
import ServiceLifecycle

/// A fixed set of connections, each used on a thread of the pool's own `NIOThreadPool`, so that blocking libpq
/// calls never occupy the Swift concurrency pool.
public final class PostgresPool: Service, Sendable {
    public let url: String
    private let threads: NIOThreadPool
    private let idle: NIOLockedValueBox<[PostgresConnection]>
    private let logger: Logger

    /// Opens `size` connections to `url` (a `postgres://` URL).
    public init(url: String, size: Int, applicationName: String = "tarrare", logger: Logger) throws {
        precondition(size > 0, "a pool needs at least one connection")
        self.url = url
        self.logger = logger
        var connections: [PostgresConnection] = []
        for _ in 0..<size {
            connections.append(try PostgresConnection(url: url, applicationName: applicationName))
        }
        idle = NIOLockedValueBox(connections)
        // NB: one thread per connection: a thread that runs a job always finds a free connection.
        threads = NIOThreadPool(numberOfThreads: size)
        threads.start()
    }

    /// Keeps the pool open until the service group shuts down, then stops its threads.
    public func run() async throws {
        try? await gracefulShutdown()
        try await close()
    }

    /// Stops the threads and closes the connections; the pool cannot be used afterwards.
    public func close() async throws {
        try await threads.shutdownGracefully()
        idle.withLockedValue { $0.removeAll() }
    }

    /// Runs `body` with a connection on one of the pool's threads.
    public func withConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws
        -> T
    {
        try await threads.runIfActive { [idle, logger] in
            guard let connection = idle.withLockedValue({ $0.popLast() }) else {
                preconditionFailure("more jobs than connections")
            }
            if connection.reopenIfClosedWhileIdle() {
                logger.warning("PostgreSQL closed an idle connection; reconnected")
            }
            defer {
                if !connection.isHealthy {
                    logger.warning("PostgreSQL connection broken; reconnecting")
                    connection.reset()
                }
                idle.withLockedValue { $0.append(connection) }
            }
            return try body(connection)
        }
    }

    /// Runs one statement, in a transaction of its own: a serialization failure or deadlock, which undid all of
    /// it, runs it again, up to `attempts` times.
    @discardableResult
    public func query(_ sql: SQL, attempts: Int = 5) async throws -> PostgresRows {
        var attempt = 1
        while true {
            do {
                return try await traced("query") { try await withConnection { try $0.query(sql) } }
            } catch let error as PostgresError where error.isRetryable && attempt < attempts {
                attempt += 1
                try await Task.sleep(for: .milliseconds(Int.random(in: 1...(10 * attempt))))
            }
        }
    }

    /// Runs `body` in a transaction, committed when it returns and rolled back when it throws. Serialization
    /// failures and deadlocks run it again, up to `attempts` times, so `body` must be safe to repeat. For `durable`,
    /// see `PostgresConnection.transaction`.
    public func transaction<T: Sendable>(
        isolation: IsolationLevel = .readCommitted, durable: Bool = true, attempts: Int = 5,
        _ body: @escaping @Sendable (PostgresConnection) throws -> T
    ) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await traced("transaction") {
                    try await withConnection { connection in
                        try connection.transaction(isolation: isolation, durable: durable, body)
                    }
                }
            } catch let error as PostgresError where error.isRetryable && attempt < attempts {
                attempt += 1
                logger.debug("retrying transaction", metadata: ["sqlstate": "\(error.sqlState ?? "")"])
                try await Task.sleep(for: .milliseconds(Int.random(in: 1...(10 * attempt))))
            }
        }
    }
}

/// How strictly concurrent transactions are kept apart.
public enum IsolationLevel: String, Sendable {
    case readCommitted = "READ COMMITTED"
    case repeatableRead = "REPEATABLE READ"
    case serializable = "SERIALIZABLE"
}

extension PostgresConnection {
    /// Runs `body` between BEGIN and COMMIT on this connection, rolling back when it throws.
    ///
    /// A transaction that is not `durable` commits without waiting for its WAL to reach the disk
    /// (`synchronous_commit = off`): it is atomic and seen at once by others, but a crash of the server may undo the
    /// last fraction of a second of such commits, each whole. Only for what the next write replaces anyway, such as a
    /// live position, whose commit would otherwise wait for the disk on every one of hundreds a second.
    public func transaction<T>(
        isolation: IsolationLevel = .readCommitted, durable: Bool = true, _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        // NB: BEGIN goes with the first statement, and COMMIT with the last ones `enqueue` held back.
        isQueueing = true
        defer { endQueueing() }
        try enqueue(SQL(stringLiteral: "BEGIN ISOLATION LEVEL \(isolation.rawValue)"))
        if !durable { try enqueue("SET LOCAL synchronous_commit = off") }
        do {
            let value = try body(self)
            if !hasCommitted { try query("COMMIT") }
            return value
        } catch {
            endQueueing()
            if isInTransaction { try? execute(script: "ROLLBACK") }
            throw error
        }
    }

    /// Runs `sql` as the last statement of the open transaction (`transaction`) and commits it in the same round
    /// trip, with what is queued before it; returns its rows. Nothing else runs on the connection until the
    /// transaction's body returns.
    public func queryCommitting(_ sql: SQL) throws -> PostgresRows {
        precondition(isQueueing, "queryCommitting outside a transaction")
        try Self.checkParameters(of: sql)
        if let queuedFailure { throw queuedFailure }
        // NB: the pipeline's rows begin with the queued statements' and end with the COMMIT's.
        let rows = try pipeline([sql, "COMMIT"])
        hasCommitted = true
        return rows[rows.count - 2]
    }
}
