import Logging
import NIOConcurrencyHelpers
import NIOPosix
import ServiceLifecycle

/// Runs a loop of blocking C calls on a thread of its own, never on the Swift concurrency pool, until the
/// service group shuts down. The loop checks `isStopping` at least once a second.
struct BlockingLoop: Sendable {
    private let stopping = NIOLockedValueBox(false)

    var isStopping: Bool { stopping.withLockedValue { $0 } }

    /// Runs `body` on a dedicated thread and returns when it does; graceful shutdown asks it to stop.
    func run(_ body: @escaping @Sendable (BlockingLoop) -> Void) async throws {
        let thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        try await withGracefulShutdownHandler {
            try await thread.runIfActive { body(self) }
        } onGracefulShutdown: {
            stopping.withLockedValue { $0 = true }
        }
        try await thread.shutdownGracefully()
    }

    /// Sleeps in short steps so that a stop is noticed; returns false when stopping.
    func sleep(seconds: Double) -> Bool {
        var remaining = seconds
        while remaining > 0 {
            if isStopping { return false }
            let step = min(remaining, 0.1)
            usleep(useconds_t(step * 1_000_000))
            remaining -= step
        }
        return !isStopping
    }
}

/// Exponential back-off with full jitter for reconnecting: 0.1 s doubling up to 5 s.
struct Backoff {
    private var attempt = 0

    mutating func nextDelay() -> Double {
        defer { attempt += 1 }
        let ceiling = min(5.0, 0.1 * Double(1 << min(attempt, 10)))
        return Double.random(in: ceiling / 2...ceiling)
    }

    mutating func reset() {
        attempt = 0
    }
}
