import Foundation
import Hummingbird
import NIOConcurrencyHelpers

/// Counters and latency histograms of one process, served as Prometheus text on `/metrics`.
public final class MetricsRegistry: Sendable {
    private struct State {
        var counters: [String: [String: Double]] = [:]
        var histograms: [String: [String: Histogram]] = [:]
    }

    private struct Histogram {
        static let bounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]
        var buckets = [Double](repeating: 0, count: bounds.count)
        var sum: Double = 0
        var count: Double = 0
    }

    private let state = NIOLockedValueBox(State())
    private let service: String

    public init(service: String) {
        self.service = service
    }

    /// Adds `amount` to the counter `name` with these labels.
    public func increment(_ name: String, labels: [String: String] = [:], by amount: Double = 1) {
        let key = Self.render(labels)
        state.withLockedValue { $0.counters[name, default: [:]][key, default: 0] += amount }
    }

    /// Records one observation, in seconds, in the histogram `name`.
    public func observe(_ name: String, seconds: Double, labels: [String: String] = [:]) {
        let key = Self.render(labels)
        state.withLockedValue { state in
            var histogram = state.histograms[name, default: [:]][key] ?? Histogram()
            for (index, bound) in Histogram.bounds.enumerated() where seconds <= bound {
                histogram.buckets[index] += 1
            }
            histogram.sum += seconds
            histogram.count += 1
            state.histograms[name, default: [:]][key] = histogram
        }
    }

    /// The Prometheus text exposition of everything recorded.
    public func render() -> String {
        let snapshot = state.withLockedValue { $0 }
        var lines: [String] = []
        for (name, series) in snapshot.counters.sorted(by: { $0.key < $1.key }) {
            lines.append("# TYPE \(name) counter")
            for (labels, value) in series.sorted(by: { $0.key < $1.key }) {
                lines.append("\(name)\(Self.braced(labels)) \(Self.format(value))")
            }
        }
        for (name, series) in snapshot.histograms.sorted(by: { $0.key < $1.key }) {
            lines.append("# TYPE \(name) histogram")
            for (labels, histogram) in series.sorted(by: { $0.key < $1.key }) {
                for (index, bound) in Histogram.bounds.enumerated() {
                    let le = "le=\"\(bound)\""
                    lines.append("\(name)_bucket\(Self.braced(labels.isEmpty ? le : labels + "," + le)) \(Self.format(histogram.buckets[index]))")
                }
                let infinity = "le=\"+Inf\""
                lines.append("\(name)_bucket\(Self.braced(labels.isEmpty ? infinity : labels + "," + infinity)) \(Self.format(histogram.count))")
                lines.append("\(name)_sum\(Self.braced(labels)) \(histogram.sum)")
                lines.append("\(name)_count\(Self.braced(labels)) \(Self.format(histogram.count))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func render(_ labels: [String: String]) -> String {
        labels.sorted { $0.key < $1.key }.map { key, value in
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            return "\(key)=\"\(escaped)\""
        }.joined(separator: ",")
    }

    private static func braced(_ labels: String) -> String { labels.isEmpty ? "" : "{\(labels)}" }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }
}

/// Counts requests and their latency by method, matched route and status.
public struct MetricsMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext
    let registry: MetricsRegistry

    public init(registry: MetricsRegistry) {
        self.registry = registry
    }

    public func handle(
        _ request: Request, context: ServiceRequestContext,
        next: (Request, ServiceRequestContext) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let labels = [
            "method": request.method.rawValue, "route": context.endpointPath ?? "unmatched",
            "status": String(response.status.code),
        ]
        registry.increment("http_requests_total", labels: labels)
        registry.observe("http_request_duration_seconds", seconds: seconds, labels: ["route": labels["route"]!])
        return response
    }
}
