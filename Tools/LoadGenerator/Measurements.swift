import Foundation
import Histogram
import NIOConcurrencyHelpers

/// Everything one run measures, filled from many tasks at once: latencies by name, errors by operation and
/// status, and counters.
final class Measurements: Sendable {
    private struct State {
        var latencies: [String: Distribution] = [:]
        var errors: [String: Int] = [:]
        var counters: [String: Int] = [:]
        /// Since `startTimeline`: when it was, and each second's operations and how many of them were slow.
        var since = Stopwatch.now()
        var sinceDate = Date()
        var seconds: [Int: Second] = [:]
        var cpuSeconds: [Int: CPUSecond] = [:]
    }

    /// One second of the measured phase as the machine spent it: whether a slow second came from a process taking
    /// the cores (an autovacuum, an erasure) or from waiting while they were free.
    struct CPUSecond: Sendable {
        /// CPU seconds by process name, the load generator included.
        var processes: [String: Double]
        var machine: MachineCPU
    }

    /// One second of the measured phase: the operations that ended in it.
    struct Second: Sendable {
        var operations = 0
        var slowest = 0.0
        /// How many of the slow ones each operation or path had: which part of the way was slow.
        var slowByName: [String: Int] = [:]
        /// Every operation's seconds, for the second's percentiles.
        var durations: [Double] = []

        /// How many operations were slow.
        var slow: Int { slowByName.values.reduce(0, +) }

        /// The second's 99th percentile.
        var p99: Double {
            guard !durations.isEmpty else { return 0 }
            let sorted = durations.sorted()
            return sorted[min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
        }
    }

    /// What counts as slow in the timeline.
    static let slowSeconds = 0.05

    private let state = NIOLockedValueBox(State())

    /// Records `seconds` under `name` (an operation such as `POST /v1/orders`, or a path through the system).
    func record(_ name: String, seconds: Double) {
        state.withLockedValue { state in
            state.latencies[name, default: Distribution()].record(seconds)
            let index = Int(Stopwatch.now() - state.since)
            var second = state.seconds[index] ?? Second()
            second.operations += 1
            second.durations.append(seconds)
            if seconds > Self.slowSeconds {
                second.slowByName[name, default: 0] += 1
                second.slowest = max(second.slowest, seconds)
            }
            state.seconds[index] = second
        }
    }

    /// Waits for the end of the timeline's current second and returns its index; nil when the timeline started
    /// again meanwhile.
    func endOfSecond() async -> Int? {
        let (since, now) = state.withLockedValue { ($0.since, Stopwatch.now()) }
        let index = Int(now - since)
        try? await Task.sleep(for: .milliseconds(Int((since + Double(index + 1) - now) * 1000) + 1))
        return state.withLockedValue { $0.since } == since ? index : nil
    }

    /// Records how the machine spent second `index` of the timeline.
    func recordCPU(second index: Int, _ cpu: CPUSecond) {
        state.withLockedValue { $0.cpuSeconds[index] = cpu }
    }

    /// How the machine spent each second of the timeline that was sampled.
    var cpuSeconds: [Int: CPUSecond] { state.withLockedValue { $0.cpuSeconds } }

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

    var latencies: [String: Distribution] { state.withLockedValue { $0.latencies } }
    var errors: [String: Int] { state.withLockedValue { $0.errors } }
    var counters: [String: Int] { state.withLockedValue { $0.counters } }
    /// When the measured phase started, by the wall clock (to find a slow second in the services' logs).
    var startDate: Date { state.withLockedValue { $0.sinceDate } }
    /// Each second since the measured phase started, in order (seconds in which nothing ended are left out).
    var timeline: [(second: Int, Second)] {
        state.withLockedValue { $0.seconds.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
    }

    /// Starts the timeline of slow seconds now, when the measured phase starts: what the set-up did before (sign-up,
    /// pairing) is kept in the latencies but not counted in the phase's seconds.
    func startTimeline() {
        state.withLockedValue {
            $0.seconds = [:]
            $0.cpuSeconds = [:]
            $0.since = Stopwatch.now()
            $0.sinceDate = Date()
        }
    }
}

/// Latencies in seconds, kept in an HDR histogram at microsecond resolution (three significant digits).
struct Distribution: Sendable {
    private var histogram = Histogram<UInt64>()

    init() {}

    init(_ seconds: [Double]) {
        for value in seconds { record(value) }
    }

    mutating func record(_ seconds: Double) {
        histogram.record(UInt64((max(0, seconds) * 1e6).rounded()))
    }

    var count: Int { Int(histogram.totalCount) }

    /// The value at percentile `p` (0 to 100), in seconds; 0 when empty.
    func percentile(_ p: Double) -> Double {
        count == 0 ? 0 : Double(histogram.valueAtPercentile(p)) / 1e6
    }

    var median: Double { percentile(50) }
}

/// A monotonic clock in seconds, for measuring intervals.
enum Stopwatch {
    static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }
}
