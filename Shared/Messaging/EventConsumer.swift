import Contracts
import Foundation
import Logging
import Postgres
import ServiceLifecycle
import Tracing

/// Consumes a service's queues with manual acks: each message's inbox row and effect commit in one transaction,
/// and only then is it acknowledged (`PendingAck`: the acknowledgements of what committed go together, within
/// 50 ms). A failing message is retried up to its queue's delivery limit and then
/// dead-lettered; one that cannot be read at all is dead-lettered at once. Reconnects with back-off. Once an hour
/// it forgets message ids older than `Inbox.retention`.
public struct EventConsumer: Service {
    let topology: Topology
    let postgresURL: String
    let amqpURL: String
    let status: BrokerStatus
    let logger: Logger
    /// NB: more than the 32 DESIGN.md suggests: a batch's transaction and commit take a few milliseconds, and what
    /// arrives meanwhile can only wait in the consumer's buffer if the broker may send it; with 32 a busy queue's
    /// deliveries stopped at every commit.
    var prefetch: UInt16 = 128
    /// Where the live messages of a committed batch go first, in this process.
    let loopback: LiveLoopback

    /// Consumes the queues of `topology` with its handlers.
    public init(
        topology: Topology, postgresURL: String, amqpURL: String, status: BrokerStatus, logger: Logger,
        loopback: LiveLoopback = LiveLoopback()
    ) {
        self.topology = topology
        self.postgresURL = postgresURL
        self.amqpURL = amqpURL
        self.status = status
        self.logger = logger
        self.loopback = loopback
    }

    /// Consumes each queue on a thread and connections of its own.
    ///
    /// NB: apart, so that a long transaction of one producer's event (an account's erasure reads whole tables)
    /// holds up no other producer's events; one loop for every queue held chat's messages back for seconds while it
    /// ran. Each queue's events are still applied in the order they arrived.
    public func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            for (index, queue) in topology.queues.enumerated() {
                status.set(Self.component(queue), connected: false)
                group.addTask {
                    try await BlockingLoop().run { loop in consume(queue, prunes: index == 0, loop) }
                }
            }
        }
    }

    /// The name `BrokerStatus` knows a queue's loop by.
    static func component(_ queue: QueueDefinition) -> String { "consumer \(queue.name)" }

    /// Consumes `queue`; the loop that `prunes` also forgets old message ids (the inbox is the service's, one
    /// table for every queue).
    private func consume(_ queue: QueueDefinition, prunes: Bool, _ loop: BlockingLoop) {
        var backoff = Backoff()
        while !loop.isStopping {
            do {
                let database = try PostgresConnection(url: postgresURL, applicationName: "\(queue.name)-consumer")
                let broker = try AMQPConnection(url: amqpURL)
                defer { broker.close() }
                try broker.declare(topology)
                try broker.setPrefetch(prefetch)
                try broker.consume(queue: queue.name)
                status.set(Self.component(queue), connected: true)
                backoff.reset()
                logger.info("consuming", metadata: ["queue": "\(queue.name)"])
                var pruning = HourlyPrune()
                var pending = PendingAck()
                defer { try? pending.send(broker, status: status, queue: queue.name) }
                while !loop.isStopping {
                    if prunes {
                        try pruning.runIfDue(logger: logger, "pruned old inbox rows") { try Inbox.prune(on: database) }
                    }
                    if pending.gathering.isDue { try pending.send(broker, status: status, queue: queue.name) }
                    let wait = pending.gathering.secondsUntilDue ?? 1
                    guard let first = try broker.nextDelivery(timeout: wait) else { continue }
                    // What has already arrived is applied with it, in one transaction.
                    var batch = [first]
                    while batch.count < Int(prefetch), let next = try broker.nextDelivery(timeout: 0) {
                        batch.append(next)
                    }
                    // Each traced event's handling, from its arrival to its commit.
                    var spans: [UInt64: any Span] = [:]
                    for delivery in batch {
                        spans[delivery.tag] = TraceContext.startSpan(
                            "process \(delivery.routingKey)", continuing: delivery.traceparent, ofKind: .consumer)
                    }
                    defer { for span in spans.values { span.end() } }
                    // NB: the events a handler appends continue the trace of what it handled, when that is one.
                    let (outcomes, live) =
                        try spans.count == 1 && batch.count == 1
                        ? InstrumentationContext.$current.withValue(spans.values.first!.context) {
                            try apply(batch, database)
                        } : apply(batch, database)
                    for (delivery, outcome) in outcomes where outcome != .applied {
                        spans[delivery.tag]?.setStatus(.init(code: .error, message: "\(outcome)"))
                    }
                    loopback.deliver(live)
                    // NB: only what another process may need: with no other process listening, the broker's copy
                    // came back here to be dropped, a quarter of the broker's work for a chat message.
                    for message in live where loopback.needsBroker(message) {
                        _ = try broker.publish(
                            OutgoingMessage(
                                exchange: message.exchange, routingKey: message.routingKey,
                                messageId: UUID().uuidString.lowercased(), type: "live", timestamp: Date(),
                                traceparent: nil, body: message.body), mandatory: false, persistent: false)
                    }
                    if let last = batch.last, outcomes.allSatisfy({ $0.1 == .applied }) {
                        pending.add(last.tag, count: outcomes.count)
                        continue
                    }
                    // NB: what is pending is acknowledged first, so that its acknowledgement of every earlier delivery
                    // cannot take in one of these.
                    try pending.send(broker, status: status, queue: queue.name)
                    for (delivery, outcome) in outcomes {
                        switch outcome {
                        case .applied:
                            try broker.ack(delivery.tag)
                            status.countConsumed(from: queue.name)
                        case .retry: try broker.reject(delivery.tag, requeue: true)
                        case .deadLetter: try broker.reject(delivery.tag, requeue: false)
                        case .unwanted:
                            try broker.ack(delivery.tag)
                            try unbind(delivery, from: queue, broker)
                        }
                    }
                }
            } catch {
                status.set(Self.component(queue), connected: false)
                let delay = backoff.nextDelay()
                logger.warning("consumer reconnecting", metadata: ["error": "\(error)", "delay": "\(delay)"])
                _ = loop.sleep(seconds: delay)
            }
        }
    }

    enum Outcome {
        case applied, retry, deadLetter
        /// Of a type no handler takes any more: a binding left from an earlier version of the service.
        case unwanted
    }

    /// Removes the binding that brought a type this consumer no longer handles, so that its queues follow its
    /// declarations also when one is dropped.
    private func unbind(_ delivery: Delivery, from queue: QueueDefinition, _ broker: AMQPConnection) throws {
        try broker.unbindQueue(queue.name, exchange: delivery.exchange, routingKey: delivery.routingKey)
        logger.warning(
            "removed a binding no handler needs",
            metadata: ["queue": "\(queue.name)", "type": "\(delivery.routingKey)"])
    }

    /// Applies deliveries in order in one transaction, each with its inbox row: one commit for what arrived
    /// together. When one of them fails, each is applied on its own, so that only the failing one is retried or
    /// dead-lettered. Returns each delivery's outcome and the live messages of what committed. Throws only when the
    /// database connection broke, so that nothing is acknowledged and the consumer reconnects.
    func apply(_ batch: [Delivery], _ database: PostgresConnection) throws -> (
        [(Delivery, Outcome)], live: [LiveMessage]
    ) {
        var outcomes: [(Delivery, Outcome)] = []
        var applicable: [(delivery: Delivery, messageId: UUID, handler: EventHandlers.Handler)] = []
        for delivery in batch {
            switch resolve(delivery) {
            case .handle(let messageId, let handler): applicable.append((delivery, messageId, handler))
            case .skip(let outcome): outcomes.append((delivery, outcome))
            }
        }
        guard !applicable.isEmpty else { return (outcomes, []) }
        do {
            let live = try database.transaction { connection in
                let recorded = applicable.filter { !$0.handler.keepsInbox }.map(\.messageId)
                var new = recorded.isEmpty ? [] : try Inbox.record(recorded, on: connection)
                var seen = Set<UUID>()
                // Each run of consecutive new events with the same handler goes to it at once.
                var runs: [(handler: EventHandlers.Handler, events: [ReceivedEvent])] = []
                for (delivery, messageId, handler) in applicable {
                    let isNew = handler.keepsInbox ? seen.insert(messageId).inserted : new.remove(messageId) != nil
                    guard isNew else { continue }
                    let event = ReceivedEvent(type: delivery.routingKey, body: delivery.body, messageId: messageId)
                    if runs.last?.handler.key == handler.key {
                        runs[runs.count - 1].events.append(event)
                    } else {
                        runs.append((handler, [event]))
                    }
                }
                var live: [LiveMessage] = []
                for (index, run) in runs.enumerated() {
                    live += try run.handler.apply(run.events, connection, index == runs.count - 1)
                }
                return live
            }
            return (outcomes + applicable.map { ($0.delivery, .applied) }, live)
        } catch let error as PostgresError where error.isConnectionFailure || !database.isHealthy {
            throw error
        } catch  where applicable.count > 1 {
            var live: [LiveMessage] = []
            for item in applicable {
                let (outcome, messages) = try apply(item.delivery, item.messageId, item.handler, database)
                outcomes.append((item.delivery, outcome))
                live += messages
            }
            return (outcomes, live)
        } catch {
            return (outcomes + applicable.map { ($0.delivery, outcome(of: error, $0.delivery)) }, [])
        }
    }

    private enum Resolution {
        case handle(UUID, EventHandlers.Handler)
        case skip(Outcome)
    }

    /// The message id and handler of a delivery, or what to do with one that can never be applied (logged).
    private func resolve(_ delivery: Delivery) -> Resolution {
        guard let messageId = delivery.messageId.flatMap(UUID.init(uuidString:)) else {
            logger.error(
                "dead-lettering a message without a UUID message_id", metadata: ["type": "\(delivery.routingKey)"])
            return .skip(.deadLetter)
        }
        guard let handler = topology.handlers.handler(for: delivery) else { return .skip(.unwanted) }
        return .handle(messageId, handler)
    }

    /// Applies one delivery in a transaction with its inbox row. Throws only when the database connection broke,
    /// so that the message stays unacknowledged and the consumer reconnects.
    private func apply(
        _ delivery: Delivery, _ messageId: UUID, _ handler: EventHandlers.Handler, _ database: PostgresConnection
    ) throws -> (Outcome, [LiveMessage]) {
        do {
            let live = try database.transaction { connection in
                guard try handler.keepsInbox || Inbox.record(messageId, on: connection) else {
                    return nil as [LiveMessage]?
                }
                let event = ReceivedEvent(type: delivery.routingKey, body: delivery.body, messageId: messageId)
                return try handler.apply([event], connection, true)
            }
            if live == nil { logger.debug("skipped a duplicate", metadata: ["messageId": "\(messageId)"]) }
            return (.applied, live ?? [])
        } catch let error as PostgresError where error.isConnectionFailure || !database.isHealthy {
            throw error
        } catch {
            return (outcome(of: error, delivery), [])
        }
    }

    /// What to do with a delivery whose handler threw `error`: dead-letter what can never be read, retry the rest
    /// up to the queue's delivery limit (logged).
    private func outcome(of error: any Error, _ delivery: Delivery) -> Outcome {
        var logger = logger
        logger[metadataKey: "messageId"] = "\(delivery.messageId ?? "none")"
        logger[metadataKey: "type"] = "\(delivery.routingKey)"
        if error is DecodingError {
            logger.error("dead-lettering a message that does not decode")
            return .deadLetter
        }
        let limit = topology.queues.first { $0.exchange == delivery.exchange }?.deliveryLimit ?? 0
        // NB: the broker dead-letters once a message has been returned more than `limit` times.
        let isLast = delivery.deliveryCount >= limit
        logger.error(
            isLast
                ? "handler failed for the last time; the broker dead-letters the message"
                : "handler failed; retrying",
            metadata: ["error": "\(error)", "deliveryCount": "\(delivery.deliveryCount)"])
        return .retry
    }
}
