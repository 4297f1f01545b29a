import Foundation
import Histogram

/// One timed operation of a benchmark.
public typealias BenchmarkJob = @Sendable () async throws -> Void

/// Latencies of a set of jobs run on concurrent clients, in microseconds, and the wall time they took.
public struct LatencyRun: Sendable {
    public let latencies: Histogram<UInt64>
    public let seconds: Double

    public init(latencies: Histogram<UInt64>, seconds: Double) {
        self.latencies = latencies
        self.seconds = seconds
    }

    /// Runs `jobs` on `clients` concurrent workers, each taking every `clients`-th job.
    public static func measure(_ jobs: [BenchmarkJob], clients: Int) async throws -> LatencyRun {
        let start = ContinuousClock.now
        let latencies = try await withThrowingTaskGroup(of: Histogram<UInt64>.self) { group in
            for worker in 0..<clients {
                group.addTask {
                    var latencies = Histogram<UInt64>(highestTrackableValue: 60_000_000)
                    for index in stride(from: worker, to: jobs.count, by: clients) {
                        let began = ContinuousClock.now
                        try await jobs[index]()
                        latencies.record(UInt64((ContinuousClock.now - began).seconds * 1e6))
                    }
                    return latencies
                }
            }
            return try await group.reduce(into: Histogram<UInt64>(highestTrackableValue: 60_000_000)) { $0.add($1) }
        }
        return LatencyRun(latencies: latencies, seconds: (ContinuousClock.now - start).seconds)
    }

    /// The latency at `percentile`, in milliseconds with two decimals.
    public func milliseconds(_ percentile: Double) -> String {
        String(format: "%.2f", Double(latencies.valueAtPercentile(percentile)) / 1000)
    }

    /// `count` operations over the wall time, rounded.
    public func perSecond(_ count: Int) -> String {
        String(format: "%.0f", Double(count) / seconds)
    }

    /// A Markdown table row: what, clients, p50, p99, operations a second.
    public func row(_ label: String, clients: Int, count: Int) -> String {
        "| \(label) | \(clients) | \(milliseconds(50)) | \(milliseconds(99)) | \(perSecond(count)) |"
    }
}

/// A small deterministic generator (SplitMix64), so that a benchmark's data is the same on every run.
public struct SeededRandom: Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in [0, 1).
    public mutating func unit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}

extension Duration {
    /// The duration in seconds.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// A running count of what the clients found, such as how many results a page held.
public final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var total = 0
    private var count = 0

    public init() {}

    public func add(_ value: Int) {
        lock.withLock {
            total += value
            count += 1
        }
    }

    public var average: Double { lock.withLock { count == 0 ? 0 : Double(total) / Double(count) } }
}
