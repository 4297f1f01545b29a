import Contracts
import Foundation
import Logging
import Postgres

/// The transactional outbox: an event is stored in the same transaction as the change it reports, and the
/// relay publishes it after commit.
public enum Outbox {
    /// Appends `event` to the outbox of the connection's open transaction and wakes the relay on commit. The event
    /// continues the current task's trace unless `traceparent` names another.
    public static func append(_ event: some Event, traceparent: String? = nil, on connection: PostgresConnection)
        throws
    {
        let type = type(of: event)
        try append(
            json: try JSONText(event), type: type.type, schemaVersion: type.schemaVersion,
            aggregateId: event.aggregateId,
            version: event.version, traceparent: traceparent, on: connection)
    }

    /// Appends a message whose JSON is already made, optionally for another exchange and routing key than the
    /// service's own exchange and the type (live notifications to one user).
    public static func append(
        json: JSONText, type: String, schemaVersion: Int = 1, aggregateId: UUID, version: Int64,
        exchange: String? = nil, routingKey: String? = nil, traceparent: String? = nil,
        on connection: PostgresConnection
    ) throws {
        // NB: queued: the row goes with the transaction's next statement or its commit, not in a round trip of its own.
        try connection.enqueue(
            """
            WITH appended AS (
                INSERT INTO outbox (id, type, schema_version, aggregate_id, version, payload, traceparent, exchange, routing_key)
                VALUES (\(UUID.timeOrdered()), \(type), \(schemaVersion), \(aggregateId), \(version), \(json)::jsonb,
                    \(traceparent ?? TraceContext.current),
                    \(exchange), \(routingKey))
                RETURNING seq
            ), \(handedToRelay("appended"))
            SELECT count(*) FROM notified
            """)
    }

    /// The outbox row of `event` as part of a larger statement that makes the change it reports, for a change that
    /// is one statement without a transaction around it: three common table expressions, `outboxed` (the row, one per
    /// row of `source`, with `payload`, SQL that gives its jsonb and may use `source`'s columns), `unsent` (its place
    /// in what the relay has to send) and `notified` (the relay's wake-up), which the statement's final query must
    /// read, as `(SELECT count(*) FROM notified)`. The row continues the current task's trace.
    ///
    /// With a `ticket` that does not notify, nothing wakes the relay: `outboxed`'s rows are then the rows as the
    /// relay publishes them (`outbox_*` columns), which the final query returns (`outboxed.*`) for
    /// `OutboxHandOff.committed`.
    public static func commonTableExpressions(
        for event: some Event, payload: SQL, from source: String, ticket: OutboxHandOff.Ticket? = nil
    ) -> SQL {
        let type = type(of: event)
        let hands = ticket.map { !$0.notifies } ?? false
        return """
            outboxed AS (
                INSERT INTO outbox (id, type, schema_version, aggregate_id, version, payload, traceparent)
                SELECT \(UUID.timeOrdered()), \(type.type), \(type.schemaVersion), \(event.aggregateId), \(event.version), \(payload),
                    \(TraceContext.current)
                FROM \(unescaped: source)
                RETURNING \(unescaped: hands ? handedColumns : "seq")
            ), \(handedToRelay("outboxed", notifying: !hands))
            """
    }

    /// An outbox row's columns as `OutboxHandOff` takes them.
    private static let handedColumns = """
        seq, seq AS outbox_seq, id AS outbox_id, payload::text AS outbox_payload, traceparent AS outbox_traceparent,
        created_at AS outbox_created_at
        """

    /// The common table expressions that hand the rows `appended` returns the seqs of to the relay: `unsent` (their
    /// places in what it has to send) and `notified` (its wake-up on commit, unless `notifying` is false), which the
    /// statement must read.
    private static func handedToRelay(_ appended: String, notifying: Bool = true) -> SQL {
        """
        unsent AS (INSERT INTO outbox_unsent (seq) SELECT seq FROM \(unescaped: appended) RETURNING 1),
        notified AS (SELECT \(unescaped: notifying ? "pg_notify('\(channel)', '')" : "1") FROM unsent)
        """
    }

    /// Erases a person who deleted their account from the payloads of the outbox, sent or not (`erase_person`): the
    /// names become `ErasedPerson.name` and what they wrote becomes empty, in the open transaction.
    public static func erase(person: UUID, on connection: PostgresConnection) throws {
        try connection.query(
            """
            UPDATE outbox SET payload = erase_person(payload, \(person), \(ErasedPerson.name))
            WHERE payload::text ILIKE \("%" + person.uuidString + "%")
            """)
    }

    /// The NOTIFY channel the relay LISTENs on.
    static let channel = "outbox"

    /// How long a sent row is kept from when it was made (to see what went out when): a week.
    static let retention: TimeInterval = 7 * 24 * 3600

    /// Deletes the sent rows made more than `retention` ago that come before every row still unsent or made since, a
    /// few thousand per statement; returns how many.
    ///
    /// NB: the relay sends in `seq` order, so what is due is a prefix of the table, found and deleted along the
    /// primary key: an hourly prune with nothing to do reads a row or two. A condition on `created_at` alone is a
    /// scan of the whole table (a second for two million rows), and the relay publishes nothing while it runs.
    @discardableResult
    static func prune(on connection: PostgresConnection) throws -> Int {
        let cutoff = Date().addingTimeInterval(-retention)
        guard
            let bounds = try connection.query(
                """
                SELECT min(seq) AS first, least(
                    (SELECT min(seq) FROM outbox_unsent),
                    coalesce((SELECT seq FROM outbox WHERE created_at >= \(cutoff) ORDER BY seq LIMIT 1), max(seq) + 1)
                ) AS bound
                FROM outbox
                """
            ).first,
            var low = try bounds.decode("first", as: Int64?.self),
            let bound = try bounds.decode("bound", as: Int64?.self)
        else { return 0 }
        var total = 0
        while low < bound {
            let high = min(low + Int64(chunk), bound)
            // NB: unsent again: a row whose seq is below the bound may have committed since it was found.
            total += try connection.query(
                """
                DELETE FROM outbox o WHERE seq >= \(low) AND seq < \(high) AND created_at < \(cutoff)
                    AND NOT EXISTS (SELECT 1 FROM outbox_unsent u WHERE u.seq = o.seq)
                RETURNING 1
                """
            ).count
            low = high
        }
        return total
    }
}

/// The inbox: the ids of messages already applied, so that a redelivered message changes nothing.
public enum Inbox {
    /// Records `messageId` in the connection's open transaction; false when it was already there (a duplicate).
    public static func record(_ messageId: UUID, on connection: PostgresConnection) throws -> Bool {
        try !record([messageId], on: connection).isEmpty
    }

    /// Records the ids in one statement; returns those that were not there yet (a repeated id counts once).
    static func record(_ messageIds: [UUID], on connection: PostgresConnection) throws -> Set<UUID> {
        Set(
            try connection.query("WITH \(recorded(messageIds)) SELECT message_id FROM recorded").map {
                try $0.decode("message_id", as: UUID.self)
            })
    }

    /// A common table expression, `recorded`, that records the message ids, and returns those that were not there
    /// yet as `message_id`: on its own (`record`), or in the statement that applies the events (`FinalStatement`).
    public static func recorded(_ messageIds: [UUID]) -> SQL {
        """
        recorded AS (
            INSERT INTO inbox (message_id) SELECT unnest(\(messageIds.map(\.uuidString))::uuid[])
            ON CONFLICT DO NOTHING RETURNING message_id
        )
        """
    }

    /// How long a message id is remembered: longer than a message can wait unacknowledged in a queue for its
    /// consumer to come back, two weeks.
    static let retention: TimeInterval = 14 * 24 * 3600

    /// Forgets message ids received more than `retention` ago, a few thousand per statement; returns how many.
    /// (`received_at` has a BRIN index: rows arrive in time order, and the index costs next to nothing to keep.)
    @discardableResult
    static func prune(on connection: PostgresConnection) throws -> Int {
        let cutoff = Date().addingTimeInterval(-retention)
        var total = 0
        while true {
            let deleted = try connection.query(
                """
                DELETE FROM inbox WHERE message_id IN (
                    SELECT message_id FROM inbox WHERE received_at < \(cutoff) LIMIT \(chunk))
                RETURNING 1
                """
            ).count
            total += deleted
            if deleted < chunk { return total }
        }
    }
}

/// Rows a prune deletes in one statement (and so one short transaction).
private let chunk = 5_000

/// Runs a prune of the messaging tables at most once an hour, from a relay's or a consumer's own loop.
struct HourlyPrune {
    private var due = Date()

    mutating func runIfDue(logger: Logger, _ message: Logger.Message, _ prune: () throws -> Int) rethrows {
        guard Date() >= due else { return }
        let pruned = try prune()
        if pruned > 0 { logger.info(message, metadata: ["rows": "\(pruned)"]) }
        due = Date().addingTimeInterval(3600)
    }
}

extension PostgresMigrator {
    /// The outbox and inbox tables every service has, before its own migrations.
    public static let messagingDirectory = Bundle.module.url(forResource: "Migrations", withExtension: nil)!
}
