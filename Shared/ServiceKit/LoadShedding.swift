import Hummingbird
import Messaging
import Metrics
import NIOConcurrencyHelpers

/// Refuses new work that would reach people seconds late: a request that changes something (any method but GET, HEAD
/// and OPTIONS) gets 503 with `Retry-After` while the service's events are too far behind on their way to the people
/// they concern (`backlog`), or while it already carries as many changes as it may (`inFlight`), so that a send is
/// refused at once instead of waiting in front of the commit behind all the others. Reads are served as ever.
/// `/metrics` shows both signals, their limits and `requests_shed_total`.
public struct LoadSheddingMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext
    let backlog: EventBacklog
    let inFlight: ChangesInFlight
    let shed: Metrics.Counter

    public init(_ shedding: LoadShedding, metrics: ServiceMetrics) {
        backlog = shedding.backlog
        inFlight = shedding.inFlight
        shed = metrics.counter("requests_shed_total")
    }

    public func handle(
        _ request: Request, context: ServiceRequestContext,
        next: (Request, ServiceRequestContext) async throws -> Response
    ) async throws -> Response {
        guard ![.get, .head, .options].contains(request.method) else { return try await next(request, context) }
        guard !backlog.isOverLimit, inFlight.enter() else {
            shed.increment()
            throw Problem(
                .serviceUnavailable, title: "Busy",
                detail:
                    "The system is still delivering what it took; send this again after the time Retry-After gives.",
                type: "/problems/busy", headers: [.retryAfter: "1"])
        }
        defer { inFlight.leave() }
        return try await next(request, context)
    }
}

/// What a service whose events go on to people sheds load by: its backlog of events and the changes it carries at once.
public struct LoadShedding: Sendable {
    public let backlog: EventBacklog
    public let inFlight: ChangesInFlight

    public init(backlog: EventBacklog, inFlight: ChangesInFlight) {
        self.backlog = backlog
        self.inFlight = inFlight
    }
}

/// The requests that change something a service is carrying out now, up to `limit` at once. Past the limit a change
/// would wait for the ones before it (about `limit` divided by what the service commits a second), so it is refused
/// instead: the backlog of events only sees what was committed, not what waits in front of the commit.
public final class ChangesInFlight: Sendable {
    public let limit: Int
    private let count = NIOLockedValueBox(0)

    public init(limit: Int) { self.limit = limit }

    /// The changes being carried out now.
    public var current: Int { count.withLockedValue { $0 } }

    /// Takes a place for one more change, or says there is none.
    func enter() -> Bool {
        count.withLockedValue { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    func leave() { count.withLockedValue { $0 -= 1 } }
}

extension LoadShedding {
    /// Sets the gauges `event_backlog`, `requests_in_flight` and their limits to what they are now, for `/metrics`.
    func record(in metrics: ServiceMetrics) {
        metrics.gauge("event_backlog").record(backlog.current)
        metrics.gauge("event_backlog_limit").record(backlog.limit)
        metrics.gauge("requests_in_flight").record(inFlight.current)
        metrics.gauge("requests_in_flight_limit").record(inFlight.limit)
    }
}
