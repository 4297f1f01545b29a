import Contracts
import Foundation
import Postgres

/// A message a handler asks its consumer to publish once the handler's transaction has committed: on a live
/// exchange, neither persistent nor confirmed, since what it carries is already stored and this only makes it
/// arrive at once.
public struct LiveMessage: Sendable, Equatable {
    public var exchange: String
    public var routingKey: String
    public var body: Data

    public init(exchange: String, routingKey: String, body: Data) {
        self.exchange = exchange
        self.routingKey = routingKey
        self.body = body
    }
}

/// An event as it arrived: its type (the routing key), its JSON and its message id.
public struct ReceivedEvent: Sendable {
    public var type: String
    public var body: Data
    public var messageId: UUID

    public init(type: String, body: Data, messageId: UUID = UUID()) {
        self.type = type
        self.body = body
        self.messageId = messageId
    }
}

/// The statement that applies a run of events for a handler of every event (`EventHandlers.onEveryEvent`), and what to
/// publish from its rows once committed. The statement records the events' message ids in the inbox itself
/// (`Inbox.recorded(_:)`) and applies only those it recorded, so that the consumer needs no statement of its own for
/// them, and when it is the batch's last it goes in the round trip that commits.
public struct FinalStatement: Sendable {
    public var sql: SQL
    public var live: @Sendable (PostgresRows) throws -> [LiveMessage]

    public init(_ sql: SQL, live: @escaping @Sendable (PostgresRows) throws -> [LiveMessage]) {
        self.sql = sql
        self.live = live
    }
}

/// What a consumer handles, each event type from the producer that publishes it, applied inside the inbox
/// transaction. The consumer's queues and bindings follow from these declarations.
public struct EventHandlers: Sendable {
    /// Applies a run of consecutive events that share the handler, in order (the last of its transaction when
    /// `isLast`). `key` tells handlers apart; a handler that `keepsInbox` records the events' ids itself.
    struct Handler: Sendable {
        var key: String
        var keepsInbox = false
        var apply: @Sendable (_ events: [ReceivedEvent], PostgresConnection, _ isLast: Bool) throws -> [LiveMessage]
    }

    var handlers: [String: Handler] = [:]
    /// Handlers of every type of one producer, by its exchange, for types without a handler of their own.
    var everyType: [String: Handler] = [:]
    /// The types bound from each producer; `#` is every type.
    var subscriptions: [String: Set<String>] = [:]

    public init() {}

    /// Applies `handler` to every `E` that `producer` publishes, in a transaction with the inbox row.
    public mutating func on<E: Event>(
        _ type: E.Type, from producer: String, _ handler: @escaping @Sendable (E, PostgresConnection) throws -> Void
    ) {
        subscriptions[producer, default: []].insert(E.type)
        handlers[E.type] = Handler(key: E.type) { events, connection, _ in
            for event in events {
                try handler(try Self.decoder.decode(E.self, from: event.body), connection)
            }
            return []
        }
    }

    /// Applies `handler` to every event `producer` publishes that has no handler of its own, for a consumer that
    /// needs to know no type (a feed). It gets the events that arrived together in order (each message id once), to
    /// apply them in one statement that also records their ids in the inbox (`FinalStatement`); what that statement's
    /// rows make is published after the commit. What it runs before that statement must be harmless to repeat.
    public mutating func onEveryEvent(
        from producer: String,
        _ handler: @escaping @Sendable (_ events: [ReceivedEvent], PostgresConnection) throws -> FinalStatement
    ) {
        subscriptions[producer, default: []].insert("#")
        let exchange = Topology.exchange(of: producer)
        everyType[exchange] = Handler(key: "every \(exchange)", keepsInbox: true) { events, connection, isLast in
            let statement = try handler(events, connection)
            // NB: the last statement of the batch commits it in the same round trip.
            let rows = try isLast ? connection.queryCommitting(statement.sql) : connection.query(statement.sql)
            return try statement.live(rows)
        }
    }

    /// Applies `event` with the handler of its type, as the consumer would apply a delivery of it (tests apply
    /// events this way); false when no handler of its own takes it.
    @discardableResult
    public func apply<E: Event>(_ event: E, on connection: PostgresConnection) throws -> Bool {
        guard let handler = handlers[E.type] else { return false }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        _ = try handler.apply([ReceivedEvent(type: E.type, body: try encoder.encode(event))], connection, false)
        return true
    }

    func handler(for delivery: Delivery) -> Handler? {
        handlers[delivery.routingKey] ?? everyType[delivery.exchange]
    }

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}
