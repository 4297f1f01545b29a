import Foundation
import Logging
import Postgres
import ServiceLifecycle
import Tracing

/// Publishes a service's outbox to its exchange, in order, marking a row sent (taking its seq out of `outbox_unsent`)
/// only after the broker confirmed it. Every replica runs one; a PostgreSQL advisory lock makes exactly one of them
/// active. It wakes on NOTIFY, on rows its own process handed it (`OutboxHandOff`), and polls every second; once an
/// hour it deletes sent rows made more than `Outbox.retention` ago.
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
    /// Where the service's own statements hand it what they committed, while it is the active relay.
    let handOff: OutboxHandOff?

    /// Publishes the outbox of `topology`'s service to its exchange.
    public init(
        topology: Topology, postgresURL: String, amqpURL: String, status: BrokerStatus, logger: Logger,
        handOff: OutboxHandOff? = nil
    ) {
        self.topology = topology
        self.handOff = handOff
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
                defer { handOff?.deactivate() }
                // NB: read at once when it becomes active, then on a NOTIFY, after a full batch and every second.
                var readIsDue = true
                var nextPoll = Date()
                var readLately = ReadLately()
                while !loop.isStopping {
                    if !isActive {
                        isActive =
                            try database.query("SELECT pg_try_advisory_lock(\(Self.lockKey)) AS locked")
                            .first?.decode("locked", as: Bool.self) ?? false
                        if isActive {
                            try database.query("LISTEN \(unescaped: Outbox.channel)")
                            handOff?.activate()
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
                    let handed = handOff?.take() ?? (rows: [], mustRead: false)
                    var read: [OutboxHandOff.Row] = []
                    if readIsDue || handed.mustRead || Date() >= nextPoll {
                        read = try readBatch(database, besides: marks.seqs + handed.rows.map(\.seq))
                        readLately.add(read.map(\.seq))
                        readIsDue = read.count == batchSize
                        nextPoll = Date().addingTimeInterval(1)
                    }
                    // NB: together in seq order: a row handed before the read came and one the read found committed
                    // after it (handed only later) may be one sender's two messages.
                    try publish(
                        (read + readLately.notAmong(handed.rows)).sorted { $0.seq < $1.seq }, broker, marks: &marks)
                    if marks.gathering.isDue { try marks.write(to: database) }
                    if !readIsDue {
                        let timeout = min(marks.gathering.secondsUntilDue ?? 1, max(0, nextPoll.timeIntervalSinceNow))
                        readIsDue = try !database.waitForNotifications(
                            timeout: timeout, orReadable: handOff?.descriptor
                        )
                        .isEmpty
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

    /// Reads up to `batchSize` unsent rows, in seq order, but for those of `besides` (sent and not marked yet, or
    /// handed).
    private func readBatch(_ database: PostgresConnection, besides: [Int64]) throws -> [OutboxHandOff.Row] {
        let rows = try database.query(
            """
            SELECT seq, id, type, schema_version, payload::text AS payload, traceparent, created_at, exchange,
                routing_key
            FROM (
                SELECT seq FROM outbox_unsent WHERE seq <> ALL(\(besides.map(String.init))::bigint[])
                ORDER BY seq LIMIT \(batchSize)
            ) next JOIN outbox USING (seq)
            ORDER BY seq
            """)
        // NB: the batch is chosen before the join: a join of every unsent row, sorted, then cut to the batch, read
        // the whole backlog for each batch of it.
        return try rows.map(OutboxHandOff.Row.init(outbox:))
    }

    /// Publishes the rows in their order and adds them to `marks` once the broker confirmed every one.
    private func publish(_ rows: [OutboxHandOff.Row], _ broker: AMQPConnection, marks: inout SentMarks) throws {
        guard !rows.isEmpty else { return }
        var firstTag: UInt64?
        var lastTag: UInt64 = 0
        // Each traced event's publish, from its handing to the broker to the broker's confirm.
        var spans: [any Span] = []
        defer { for span in spans { span.end() } }
        for row in rows {
            let span = TraceContext.startSpan("publish \(row.type)", continuing: row.traceparent, ofKind: .producer)
            if let span {
                span.attributes["messaging.system"] = "rabbitmq"
                span.attributes["messaging.message.id"] = row.id.uuidString.lowercased()
                spans.append(span)
            }
            if row.exchange == nil && !declaredTypes.contains(row.type) {
                logger.error("publishing an event type the service does not declare", metadata: ["type": "\(row.type)"])
            }
            lastTag = try broker.publish(
                OutgoingMessage(
                    exchange: row.exchange ?? Topology.exchange(of: topology.service),
                    routingKey: row.routingKey ?? row.type,
                    messageId: row.id.uuidString.lowercased(),
                    type: "\(row.type).v\(row.schemaVersion)", timestamp: row.createdAt,
                    traceparent: span.flatMap { TraceContext.traceparent(of: $0.context) },
                    body: Data(row.payload.utf8)))
            firstTag = firstTag ?? lastTag
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
        marks.add(rows.map(\.seq))
    }

    static let lockKey: Int64 = 0x7461_7272_6172_6502
}

extension OutboxHandOff.Row {
    /// A row of the relay's read of the outbox.
    fileprivate init(outbox row: PostgresRow) throws {
        self.init(
            seq: try row.decode("seq"), id: try row.decode("id"), type: try row.decode("type"),
            schemaVersion: try row.decode("schema_version"), payload: try row.decode("payload"),
            traceparent: try row.decode("traceparent"), createdAt: try row.decode("created_at"),
            exchange: try row.decode("exchange"), routingKey: try row.decode("routing_key"))
    }
}
