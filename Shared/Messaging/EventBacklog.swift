import Foundation
import Logging
import NIOConcurrencyHelpers
import Postgres
import ServiceLifecycle

/// How many of a service's events wait on their way to the people they concern: its outbox's unsent rows and the
/// messages ready in its downstream consumers' queues (`<consumer>.<service>`). It is the signal for shedding load:
/// above the limit, a message taken now would reach its recipient seconds late, so the API refuses new work until
/// the path has caught up. Measured every quarter second on connections of its own; 0 until first measured, and a
/// queue that does not exist yet counts 0.
public final class EventBacklog: Service, Sendable {
    let topology: Topology
    let postgresURL: String
    let amqpURL: String
    let logger: Logger
    /// The backlog above which the API refuses new work.
    public let limit: Int
    private let measured = NIOLockedValueBox(0)

    public init(topology: Topology, limit: Int, postgresURL: String, amqpURL: String, logger: Logger) {
        self.topology = topology
        self.limit = limit
        self.postgresURL = postgresURL
        self.amqpURL = amqpURL
        self.logger = logger
    }

    /// The events waiting at the last measurement.
    public var current: Int { measured.withLockedValue { $0 } }

    /// Whether the path is behind by more than `limit`.
    public var isOverLimit: Bool { current > limit }

    public func run() async throws {
        try await BlockingLoop().run { loop in self.measure(loop) }
    }

    private var queues: [String] {
        topology.downstream.map { QueueDefinition(consumer: $0, producer: topology.service, types: []).name }
    }

    private func measure(_ loop: BlockingLoop) {
        var backoff = Backoff()
        var missing = Set<String>()
        var askAgain = Date()
        while !loop.isStopping {
            do {
                let database = try PostgresConnection(url: postgresURL, applicationName: "\(topology.service)-backlog")
                var broker: AMQPConnection? = try AMQPConnection(url: amqpURL)
                defer { broker?.close() }
                backoff.reset()
                while !loop.isStopping {
                    // NB: counted up to a bound, so that a large backlog costs no more to measure than the limit.
                    var total: Int =
                        try database.query(
                            "SELECT count(*) AS n FROM (SELECT 1 FROM outbox_unsent LIMIT \(limit * 10)) t"
                        ).first?.decode("n") ?? 0
                    for queue in queues where !missing.contains(queue) {
                        do {
                            if broker == nil { broker = try AMQPConnection(url: amqpURL) }
                            total += try broker!.readyMessages(in: queue)
                        } catch {
                            // A consumer not started yet has no queue; it is asked for again after a while.
                            broker?.close()
                            broker = nil
                            missing.insert(queue)
                        }
                    }
                    measured.withLockedValue { $0 = total }
                    try broker?.serviceHeartbeats()
                    _ = loop.sleep(seconds: 0.25)
                    if Date() >= askAgain {
                        missing.removeAll()
                        askAgain = Date().addingTimeInterval(10)
                    }
                }
            } catch {
                let delay = backoff.nextDelay()
                logger.debug("backlog not measured", metadata: ["error": "\(error)", "delay": "\(delay)"])
                _ = loop.sleep(seconds: delay)
            }
        }
    }
}
