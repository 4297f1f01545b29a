import Foundation
import Hummingbird
import Metrics
import Prometheus

/// The metrics of one service instance: swift-metrics handlers backed by a Prometheus registry of its own (so that
/// several instances in one process, as in the tests, keep apart), served as Prometheus text on `/metrics`.
public struct ServiceMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory

    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
            .milliseconds(2500), .seconds(5),
        ]
        self.factory = factory
    }

    /// A counter shown on `/metrics` under `label`.
    public func counter(_ label: String, dimensions: [(String, String)] = []) -> Metrics.Counter {
        Metrics.Counter(label: label, dimensions: dimensions, factory: factory)
    }

    /// A gauge shown on `/metrics` under `label`.
    public func gauge(_ label: String, dimensions: [(String, String)] = []) -> Metrics.Gauge {
        Metrics.Gauge(label: label, dimensions: dimensions, factory: factory)
    }

    /// The Prometheus text exposition of everything recorded.
    public func render() -> String {
        registry.emitToString()
    }
}

/// Counts requests (`http_requests_total` by method, matched route and status) and their latency
/// (`http_request_duration_seconds` by route).
public struct MetricsMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext
    let metrics: ServiceMetrics

    public init(metrics: ServiceMetrics) {
        self.metrics = metrics
    }

    public func handle(
        _ request: Request, context: ServiceRequestContext,
        next: (Request, ServiceRequestContext) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        let route = context.endpointPath ?? "unmatched"
        Counter(
            label: "http_requests_total",
            dimensions: [
                ("method", request.method.rawValue), ("route", route), ("status", String(response.status.code)),
            ],
            factory: metrics.factory
        ).increment()
        Metrics.Timer(label: "http_request_duration_seconds", dimensions: [("route", route)], factory: metrics.factory)
            .record(duration: ContinuousClock.now - start)
        return response
    }
}
