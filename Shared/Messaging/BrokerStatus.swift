import Metrics
import NIOConcurrencyHelpers

/// Whether a process's relay and consumer currently hold a working broker connection, for `/health/ready`, and how
/// many events its consumer took.
public final class BrokerStatus: Sendable {
    private let connections = NIOLockedValueBox<[String: Bool]>([:])
    private let connects = NIOLockedValueBox<[String: Int]>([:])
    private let consumed = NIOLockedValueBox<[String: Int]>([:])
    private let metrics: (any MetricsFactory)?

    /// `metrics` counts the events consumed as `events_consumed_total` by queue, for `/metrics`.
    public init(metrics: (any MetricsFactory)? = nil) {
        self.metrics = metrics
    }

    func set(_ component: String, connected: Bool) {
        connections.withLockedValue { $0[component] = connected }
        if connected { connects.withLockedValue { $0[component, default: 0] += 1 } }
    }

    /// Counts `count` events applied and acknowledged from `queue`.
    func countConsumed(_ count: Int = 1, from queue: String) {
        consumed.withLockedValue { $0[queue, default: 0] += count }
        if let metrics {
            let counter = Counter(label: "events_consumed_total", dimensions: [("queue", queue)], factory: metrics)
            counter.increment(by: count)
        }
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
