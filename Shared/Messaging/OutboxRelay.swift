import Foundation
import Logging
import Postgres
import ServiceLifecycle
import Tracing

/// Publishes a service's outbox to its exchange, in order, marking a row sent (taking its seq out of `outbox_unsent`)
/// only after the broker confirmed it. Every replica runs one; a PostgreSQL advisory lock makes exactly one of them
/// active. It wakes on NOTIFY and polls every second; once an hour it deletes sent rows made more than
/// `Outbox.retention` ago.
///
/// The marks are written together, a few times a second (`SentMarks`): a transaction for each batch, at the rates a
/// campus sends (a message or two a batch), was a commit and four statements for every message. Rows confirmed and
/// not marked yet are left out of the next batches; should the relay stop before it marks them, the next one sends
/// them again with the same message ids, which consumers' inboxes drop, as they drop any copy.
public struct OutboxRelay: Service {
    let topology: Topology
    let postgresURL: String
    let amqpURL: String
    let status: BrokerStatus
    let logger: Logger
    var batchSize = 100
    /// The types the service declared it publishes.
    let declaredTypes: Set<String>

    /// Publishes the outbox of `topology`'s service to its exchange.
    public init(topology: Topology, postgresURL: String, amqpURL: String, status: BrokerStatus, logger: Logger) {
        self.topology = topology
        declaredTypes = Set(topology.publishes)
        self.postgresURL = postgresURL
        self.amqpURL = amqpURL
        self.status = status
        self.logger = logger
    }

    public func run() async throws {
        status.set("relay", connected: false)
        try await BlockingLoop().run { loop in relay(loop) }
    }

    private func relay(_ loop: BlockingLoop) {
        var backoff = Backoff()
        while !loop.isStopping {
            do {
                let database = try PostgresConnection(url: postgresURL, applicationName: "\(topology.service)-relay")
                let broker = try AMQPConnection(url: amqpURL)
                defer { broker.close() }
                try broker.declare(topology)
                try broker.enableConfirms()
                status.set("relay", connected: true)
                backoff.reset()
                var isActive = false
                var pruning = HourlyPrune()
                var marks = SentMarks()
                defer { try? marks.write(to: database) }
                while !loop.isStopping {
                    if !isActive {
                        isActive =
                            try database.query("SELECT pg_try_advisory_lock(\(Self.lockKey)) AS locked")
                            .first?.decode("locked", as: Bool.self) ?? false
                        if isActive {
                            try database.query("LISTEN \(unescaped: Outbox.channel)")
                            logger.info("outbox relay active")
                        } else {
                            try broker.serviceHeartbeats()
                            _ = loop.sleep(seconds: 1)
                            continue
                        }
                    }
                    try pruning.runIfDue(logger: logger, "pruned sent outbox rows") {
                        try marks.write(to: database)
                        return try Outbox.prune(on: database)
                    }
                    let published = try publishBatch(database, broker, marks: &marks)
                    if marks.gathering.isDue { try marks.write(to: database) }
                    if published < batchSize {
                        _ = try database.waitForNotifications(timeout: marks.gathering.secondsUntilDue ?? 1)
                        try broker.serviceHeartbeats()
                    }
                }
            } catch {
                status.set("relay", connected: false)
                let delay = backoff.nextDelay()
                logger.warning("outbox relay reconnecting", metadata: ["error": "\(error)", "delay": "\(delay)"])
                _ = loop.sleep(seconds: delay)
            }
        }
    }

    /// Publishes up to `batchSize` unsent rows that are not among `marks` and adds the confirmed ones to them;
    /// returns how many it published.
    private func publishBatch(_ database: PostgresConnection, _ broker: AMQPConnection, marks: inout SentMarks) throws
        -> Int
    {
        let rows = try database.query(
            """
            SELECT seq, id, type, schema_version, payload::text AS payload, traceparent, created_at, exchange,
                routing_key
            FROM (
                SELECT seq FROM outbox_unsent WHERE seq <> ALL(\(marks.seqs.map(String.init))::bigint[])
                ORDER BY seq LIMIT \(batchSize)
            ) next JOIN outbox USING (seq)
            ORDER BY seq
            """)
        // NB: the batch is chosen before the join: a join of every unsent row, sorted, then cut to the batch, read
        // the whole backlog for each batch of it.
        guard !rows.isEmpty else { return 0 }
        var sent: [Int64] = []
        var firstTag: UInt64?
        var lastTag: UInt64 = 0
        // Each traced event's publish, from its handing to the broker to the broker's confirm.
        var spans: [any Span] = []
        defer { for span in spans { span.end() } }
        for row in rows {
            let id = try row.decode("id", as: UUID.self)
            let type = try row.decode("type", as: String.self)
            let span = TraceContext.startSpan(
                "publish \(type)", continuing: try row.decode("traceparent"), ofKind: .producer)
            if let span {
                span.attributes["messaging.system"] = "rabbitmq"
                span.attributes["messaging.message.id"] = id.uuidString.lowercased()
                spans.append(span)
            }
            let schemaVersion = try row.decode("schema_version", as: Int.self)
            let exchange: String? = try row.decode("exchange")
            if exchange == nil && !declaredTypes.contains(type) {
                logger.error("publishing an event type the service does not declare", metadata: ["type": "\(type)"])
            }
            lastTag = try broker.publish(
                OutgoingMessage(
                    exchange: exchange ?? Topology.exchange(of: topology.service),
                    routingKey: try row.decode("routing_key") ?? type,
                    messageId: id.uuidString.lowercased(),
                    type: "\(type).v\(schemaVersion)", timestamp: try row.decode("created_at"),
                    traceparent: span.flatMap { TraceContext.traceparent(of: $0.context) },
                    body: Data(try row.decode("payload", as: String.self).utf8)))
            firstTag = firstTag ?? lastTag
            sent.append(try row.decode("seq", as: Int64.self))
        }
        let (nacked, returned) = try broker.waitForConfirms(from: firstTag ?? lastTag, through: lastTag, timeout: 30)
        guard nacked.isEmpty else {
            for span in spans { span.setStatus(.init(code: .error, message: "refused by the broker")) }
            // NB: rows stay unsent and go again in order; consumers drop the copies that did arrive.
            throw AMQPError("the broker refused \(nacked.count) of \(rows.count) messages")
        }
        // NB: an event no consumer has bound yet comes back unrouted; a consumer binds its queues when it starts.
        for messageId in returned {
            logger.debug("no queue took a message", metadata: ["messageId": "\(messageId)"])
        }
        marks.add(sent)
        return rows.count
    }

    static let lockKey: Int64 = 0x7461_7272_6172_6502
}
