import Contracts
import Foundation
import Postgres

/// The transactional outbox: an event is stored in the same transaction as the change it reports, and the
/// relay publishes it after commit.
public enum Outbox {
    /// Appends `event` to the outbox of the connection's open transaction and wakes the relay on commit.
    public static func append(_ event: some Event, traceparent: String? = nil, on connection: PostgresConnection)
        throws
    {
        let type = type(of: event)
        try append(
            json: try JSONText(event), type: type.type, schemaVersion: type.schemaVersion, aggregateId: event.aggregateId,
            version: event.version, traceparent: traceparent, on: connection)
    }

    /// Appends a message whose JSON is already made, optionally for another exchange and routing key than the
    /// service's own exchange and the type (live notifications to one user).
    public static func append(
        json: JSONText, type: String, schemaVersion: Int = 1, aggregateId: UUID, version: Int64,
        exchange: String? = nil, routingKey: String? = nil, traceparent: String? = nil, on connection: PostgresConnection
    ) throws {
        try connection.query(
            """
            INSERT INTO outbox (id, type, schema_version, aggregate_id, version, payload, traceparent, exchange, routing_key)
            VALUES (\(UUID()), \(type), \(schemaVersion), \(aggregateId), \(version), \(json)::jsonb, \(traceparent),
                \(exchange), \(routingKey))
            """)
        try connection.query("SELECT pg_notify(\(channel), '')")
    }

    /// The NOTIFY channel the relay LISTENs on.
    static let channel = "outbox"
}

/// The inbox: the ids of messages already applied, so that a redelivered message changes nothing.
public enum Inbox {
    /// Records `messageId` in the connection's open transaction; false when it was already there (a duplicate).
    public static func record(_ messageId: UUID, on connection: PostgresConnection) throws -> Bool {
        let rows = try connection.query(
            "INSERT INTO inbox (message_id) VALUES (\(messageId)) ON CONFLICT DO NOTHING RETURNING message_id")
        return !rows.isEmpty
    }
}

extension PostgresMigrator {
    /// The outbox and inbox tables every service has, before its own migrations.
    public static let messagingDirectory = Bundle.module.url(forResource: "Migrations", withExtension: nil)!
}
