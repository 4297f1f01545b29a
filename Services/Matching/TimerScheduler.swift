import Logging
import ServiceLifecycle

/// Works due timers (offer windows, run windows, order lifetimes). Every replica runs one; `FOR UPDATE SKIP
/// LOCKED` gives each due timer to exactly one of them, and a replica that dies mid-way leaves its timers to
/// the others when its transaction rolls back.
struct TimerScheduler: Service {
    let repository: DeliveryPostgresRepository
    let interval: Duration
    let logger: Logger

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                // Drain a backlog at once; otherwise wait for the next tick.
                while try await repository.workDueTimers() > 0 {}
            } catch {
                logger.warning("timer scheduler failed; retrying", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: interval)
        }
    }
}
