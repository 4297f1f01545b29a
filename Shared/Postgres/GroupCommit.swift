import NIOConcurrencyHelpers
import Tracing

/// Runs single statements that arrive together as one transaction: what arrives while earlier batches commit waits
/// and goes in the next batch, sent in one round trip and committed once. Each statement keeps its own rows; a batch
/// that fails runs its statements again one at a time, so that one statement's error stays its own.
///
/// For a statement that is its own transaction and is sent many times a second (a chat message): at one a time it
/// costs what `PostgresPool.query` costs, and under load a commit, its WAL flush and a NOTIFY serve many.
public final class GroupCommit: Sendable {
    private let database: PostgresPool
    private let batchLimit: Int
    private let inFlightLimit: Int
    private let state = NIOLockedValueBox(State())

    private struct State {
        var waiting: [(sql: SQL, continuation: CheckedContinuation<PostgresRows, any Error>)] = []
        var inFlight = 0
    }

    /// Batches of up to `batchLimit` statements, at most `inFlightLimit` committing at once (each on a connection of
    /// `database`).
    public init(database: PostgresPool, batchLimit: Int = 64, inFlightLimit: Int = 2) {
        self.database = database
        self.batchLimit = batchLimit
        self.inFlightLimit = inFlightLimit
    }

    /// Runs `sql` in the next batch and returns its rows once the batch committed.
    public func query(_ sql: SQL) async throws -> PostgresRows {
        let runsAlone = state.withLockedValue { state in
            guard state.waiting.isEmpty, state.inFlight < inFlightLimit else { return false }
            state.inFlight += 1
            return true
        }
        guard !runsAlone else {
            // NB: nothing waits and a commit is free: it is the statement it always was, in its caller's task, one
            // round trip committed by itself; what arrived meanwhile is committed after it.
            defer { handOver() }
            return try await database.query(sql)
        }
        return try await traced("query in a shared commit") { try await waitForCommit(sql) }
    }

    /// Queues `sql` for the next batch and waits for its rows.
    private func waitForCommit(_ sql: SQL) async throws -> PostgresRows {
        try await withCheckedThrowingContinuation { continuation in
            let starts = state.withLockedValue { state in
                state.waiting.append((sql, continuation))
                guard state.inFlight < inFlightLimit else { return false }
                state.inFlight += 1
                return true
            }
            if starts { startCommitting() }
        }
    }

    /// Gives up a statement's place among those in flight, or commits what waits in it.
    private func handOver() {
        let commitsWaiting = state.withLockedValue { state in
            if state.waiting.isEmpty { state.inFlight -= 1 }
            return !state.waiting.isEmpty
        }
        if commitsWaiting { startCommitting() }
    }

    /// Commits what waits in a task of its own, outside the trace of the statement that started it.
    private func startCommitting() {
        Task { await InstrumentationContext.$current.withValue(nil) { await commitWaiting() } }
    }

    /// Commits batches of what waits until nothing does.
    private func commitWaiting() async {
        while true {
            let batch = state.withLockedValue { state in
                let batch = Array(state.waiting.prefix(batchLimit))
                state.waiting.removeFirst(batch.count)
                if batch.isEmpty { state.inFlight -= 1 }
                return batch
            }
            guard !batch.isEmpty else { return }
            if batch.count > 1 {
                let statements = batch.map(\.sql)
                if let rows = try? await database.withConnection({ try $0.inOneRoundTrip(statements) }) {
                    for (waiting, rows) in zip(batch, rows) { waiting.continuation.resume(returning: rows) }
                    continue
                }
            }
            // NB: alone, or again one at a time after its batch failed, so that an error is only its own statement's.
            for waiting in batch {
                do {
                    waiting.continuation.resume(returning: try await database.query(waiting.sql))
                } catch {
                    waiting.continuation.resume(throwing: error)
                }
            }
        }
    }
}
