import Foundation
import NIOConcurrencyHelpers

/// Everything one run measures, filled from many tasks at once: latencies by name, errors by operation and
/// status, and counters.
final class Measurements: Sendable {
    private struct State {
        var latencies: [String: [Double]] = [:]
        var errors: [String: Int] = [:]
        var counters: [String: Int] = [:]
    }

    private let state = NIOLockedValueBox(State())

    /// Records `seconds` under `name` (an operation such as `POST /v1/orders`, or a path through the system).
    func record(_ name: String, seconds: Double) {
        state.withLockedValue { $0.latencies[name, default: []].append(seconds) }
    }

    /// Counts an error of `operation`: an HTTP status, or a word for what went wrong (`timeout`, `closed`).
    func recordError(_ operation: String, _ status: String) {
        state.withLockedValue { $0.errors["\(operation) → \(status)", default: 0] += 1 }
    }

    func count(_ name: String, by amount: Int = 1) {
        state.withLockedValue { $0.counters[name, default: 0] += amount }
    }

    func counter(_ name: String) -> Int {
        state.withLockedValue { $0.counters[name] ?? 0 }
    }

    var latencies: [String: [Double]] { state.withLockedValue { $0.latencies } }
    var errors: [String: Int] { state.withLockedValue { $0.errors } }
    var counters: [String: Int] { state.withLockedValue { $0.counters } }

    /// Forgets the latencies and errors of the set-up, keeping its counters.
    func resetLatencies() {
        state.withLockedValue {
            $0.latencies = [:]
            $0.errors = [:]
        }
    }
}

/// The order statistics of a set of seconds.
struct Distribution {
    let sorted: [Double]

    init(_ values: [Double]) {
        sorted = values.sorted()
    }

    var count: Int { sorted.count }

    /// The nearest-rank percentile, in seconds; 0 when empty.
    func percentile(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }

    var median: Double { percentile(50) }
}

/// A monotonic clock in seconds, for measuring intervals.
enum Stopwatch {
    static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }
}
