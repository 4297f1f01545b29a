import NIOConcurrencyHelpers

/// Whether a process's relay and consumer currently hold a working broker connection, for `/health/ready`.
public final class BrokerStatus: Sendable {
    private let connections = NIOLockedValueBox<[String: Bool]>([:])
    private let connects = NIOLockedValueBox<[String: Int]>([:])
    private let consumed = NIOLockedValueBox<[String: Int]>([:])

    public init() {}

    func set(_ component: String, connected: Bool) {
        connections.withLockedValue { $0[component] = connected }
        if connected { connects.withLockedValue { $0[component, default: 0] += 1 } }
    }

    /// Counts `count` events applied and acknowledged from `queue` (for `/metrics`).
    func countConsumed(_ count: Int = 1, from queue: String) {
        consumed.withLockedValue { $0[queue, default: 0] += count }
    }

    /// How many events this process has applied and acknowledged, by queue, since start.
    public var consumedCounts: [String: Int] {
        consumed.withLockedValue { $0 }
    }

    /// How many times each component (`relay`, `consumer <queue>`) has connected since start; more than one means it
    /// reconnected.
    public var connectCounts: [String: Int] {
        connects.withLockedValue { $0 }
    }

    /// True when every component that registered is connected (and at least one did).
    public var isConnected: Bool {
        connections.withLockedValue { !$0.isEmpty && $0.values.allSatisfy { $0 } }
    }
}
