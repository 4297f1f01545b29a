import Foundation
import Logging
import Postgres
import ServiceLifecycle

/// Publishes a service's outbox to its exchange, in order, marking a row sent only after the broker confirmed it.
/// Every replica runs one; a PostgreSQL advisory lock makes exactly one of them active. Rows committed while earlier
/// ones await their confirms are published at once, up to `window` unconfirmed. It wakes on NOTIFY and on confirms,
/// and reads the outbox at least once a second; once an hour it deletes rows sent more than `Outbox.retention` ago.
public struct OutboxRelay: Service {
    let topology: Topology
    let postgresURL: String
    let amqpURL: String
    let status: BrokerStatus
    let logger: Logger
    var batchSize = 100
    /// How many messages may await their confirms at once.
    var window = 500
    /// How long the broker may take to confirm a message before the relay reconnects and publishes it again.
    var confirmTimeout: TimeInterval = 30
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
                var inFlight = InFlight()
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
                    try pruning.runIfDue(logger: logger, "pruned sent outbox rows") { try Outbox.prune(on: database) }
                    try step(database, broker, &inFlight)
                }
            } catch {
                status.set("relay", connected: false)
                let delay = backoff.nextDelay()
                logger.warning("outbox relay reconnecting", metadata: ["error": "\(error)", "delay": "\(delay)"])
                _ = loop.sleep(seconds: delay)
            }
        }
    }

    /// The messages published on this connection and not yet marked sent, oldest first.
    struct InFlight {
        var rows: [(tag: UInt64, seq: Int64, id: UUID, publishedAt: Date)] = []
        var confirms = PublisherConfirms()
        /// Whether unsent rows may be waiting: a NOTIFY came, the last read was full, or a second passed.
        var mayHaveMore = true
        var nextRead = Date()
    }

    /// Publishes what waits (up to the window), marks what the broker confirmed sent, and waits for a NOTIFY or a
    /// confirm when nothing more can be published yet.
    private func step(_ database: PostgresConnection, _ broker: AMQPConnection, _ inFlight: inout InFlight) throws {
        if inFlight.mayHaveMore || Date() >= inFlight.nextRead, inFlight.rows.count < window {
            let limit = min(batchSize, window - inFlight.rows.count)
            let published = try publish(limit: limit, database, broker, &inFlight)
            inFlight.mayHaveMore = published == limit
            inFlight.nextRead = Date().addingTimeInterval(1)
        }
        try broker.readConfirms(into: &inFlight.confirms, timeout: 0)
        try markSent(database, &inFlight)
        if inFlight.mayHaveMore && inFlight.rows.count < window { return }
        if try !database.waitForNotifications(timeout: 0).isEmpty {
            inFlight.mayHaveMore = true
            return
        }
        let wait = inFlight.nextRead.timeIntervalSinceNow
        try broker.waitForInput(orReadable: database.socket, timeout: max(0, min(1, wait)))
        inFlight.mayHaveMore = try !database.waitForNotifications(timeout: 0).isEmpty
    }

    /// Publishes up to `limit` unsent rows that are not in flight, in order; returns how many it published.
    private func publish(
        limit: Int, _ database: PostgresConnection, _ broker: AMQPConnection, _ inFlight: inout InFlight
    ) throws -> Int {
        let rows = try database.query(
            """
            SELECT seq, id, type, schema_version, payload::text AS payload, traceparent, created_at, exchange, routing_key
            FROM outbox WHERE sent_at IS NULL AND seq <> ALL(\(inFlight.rows.map { String($0.seq) })::bigint[])
            ORDER BY seq LIMIT \(limit)
            """)
        for row in rows {
            let id = try row.decode("id", as: UUID.self)
            let type = try row.decode("type", as: String.self)
            let schemaVersion = try row.decode("schema_version", as: Int.self)
            let exchange: String? = try row.decode("exchange")
            if exchange == nil && !declaredTypes.contains(type) {
                logger.error("publishing an event type the service does not declare", metadata: ["type": "\(type)"])
            }
            let tag = try broker.publish(
                OutgoingMessage(
                    exchange: exchange ?? Topology.exchange(of: topology.service),
                    routingKey: try row.decode("routing_key") ?? type,
                    messageId: id.uuidString.lowercased(),
                    type: "\(type).v\(schemaVersion)", timestamp: try row.decode("created_at"),
                    traceparent: try row.decode("traceparent"),
                    body: Data(try row.decode("payload", as: String.self).utf8)))
            inFlight.rows.append((tag, try row.decode("seq"), id, Date()))
        }
        return rows.count
    }

    /// Marks the rows the broker confirmed sent, oldest first, up to the first one it has not confirmed yet.
    private func markSent(_ database: PostgresConnection, _ inFlight: inout InFlight) throws {
        guard inFlight.confirms.refused.isEmpty else {
            // NB: rows stay unsent and go again in order; consumers drop the copies that did arrive.
            throw AMQPError("the broker refused \(inFlight.confirms.refused.count) messages")
        }
        // NB: an event no consumer has bound yet comes back unrouted; a consumer binds its queues when it starts.
        for messageId in inFlight.confirms.returned {
            logger.debug("no queue took a message", metadata: ["messageId": "\(messageId)"])
        }
        inFlight.confirms.returned.removeAll()
        let confirmed = inFlight.rows.prefix { $0.tag <= inFlight.confirms.settledThrough }
        if let oldest = inFlight.rows.dropFirst(confirmed.count).first,
            Date().timeIntervalSince(oldest.publishedAt) > confirmTimeout
        {
            throw AMQPError("timed out waiting for publisher confirms")
        }
        guard !confirmed.isEmpty else { return }
        // NB: not durable: a mark lost in a crash of the server sends its rows again, with the same message ids,
        // which consumers' inboxes drop; waiting for the disk here held up the next batch on every one.
        try database.transaction(durable: false) { connection in
            try connection.enqueue(
                "UPDATE outbox SET sent_at = now() WHERE seq = ANY(\(confirmed.map { String($0.seq) })::bigint[])")
        }
        inFlight.rows.removeFirst(confirmed.count)
    }

    static let lockKey: Int64 = 0x7461_7272_6172_6502
}
