import Hummingbird
import Messaging
import Metrics

/// Refuses new work while the service's events are too far behind on their way to the people they concern: a
/// request that changes something (any method but GET, HEAD and OPTIONS) gets 503 with `Retry-After`, before it
/// takes work that would be delivered seconds late. Reads are served as ever. `/metrics` shows the backlog, its limit
/// and `requests_shed_total`.
public struct LoadSheddingMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext
    let backlog: EventBacklog
    let shed: Metrics.Counter

    public init(backlog: EventBacklog, metrics: ServiceMetrics) {
        self.backlog = backlog
        shed = metrics.counter("requests_shed_total")
    }

    public func handle(
        _ request: Request, context: ServiceRequestContext,
        next: (Request, ServiceRequestContext) async throws -> Response
    ) async throws -> Response {
        guard ![.get, .head, .options].contains(request.method), backlog.isOverLimit else {
            return try await next(request, context)
        }
        shed.increment()
        throw Problem(
            .serviceUnavailable, title: "Busy",
            detail: "The system is still delivering what it took; send this again after the time Retry-After gives.",
            type: "/problems/busy", headers: [.retryAfter: "1"])
    }
}

/// `event_backlog` and `event_backlog_limit` in Prometheus text.
func backlogMetrics(_ backlog: EventBacklog?) -> String {
    guard let backlog else { return "" }
    return "# TYPE event_backlog gauge\nevent_backlog \(backlog.current)\n"
        + "# TYPE event_backlog_limit gauge\nevent_backlog_limit \(backlog.limit)\n"
}
