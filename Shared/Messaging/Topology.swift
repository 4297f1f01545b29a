import Foundation

/// What one service does on the broker, from its own declarations: the event types it publishes on its exchange
/// `<service>.events`, and one durable quorum queue `<service>.<producer>` per producer it consumes, bound to
/// exactly the types its handlers take. Every process declares its part idempotently at start.
public struct Topology: Sendable {
    public let service: String
    /// The types this service publishes on its own exchange.
    public let publishes: [String]
    /// What it consumes; its queues follow from these.
    public let handlers: EventHandlers
    /// The queues this service consumes.
    public let queues: [QueueDefinition]
    /// Exchanges besides its own and its producers' that the service publishes to (a live channel).
    public let otherExchanges: [String]
    /// The services that take this one's events on to the people concerned (notifications, for chat): the messages
    /// waiting in their queues of it count toward its `EventBacklog`.
    public let downstream: [String]

    public init(
        service: String, publishes: [String] = [], handlers: EventHandlers = EventHandlers(), deliveryLimit: Int = 5,
        otherExchanges: [String] = [], downstream: [String] = []
    ) {
        self.service = service
        self.downstream = downstream
        self.publishes = publishes
        self.otherExchanges = otherExchanges
        self.handlers = handlers
        queues = handlers.subscriptions.keys.sorted().map { producer in
            QueueDefinition(
                consumer: service, producer: producer, types: handlers.subscriptions[producer]!.sorted(),
                deliveryLimit: deliveryLimit)
        }
    }

    /// Its own exchange, its producers' (so that its bindings can be made before they ever ran) and the others.
    public var exchanges: [String] {
        [Self.exchange(of: service)] + queues.map(\.exchange) + otherExchanges
    }

    /// The exchange a producing service publishes to.
    public static func exchange(of service: String) -> String { "\(service).events" }

    /// Declares this service's part once, for a process that must know its queues are bound before it goes on
    /// (at start, before it serves, so that what its producers publish from then on is kept for it).
    public func declare(amqpURL: String) throws {
        let broker = try AMQPConnection(url: amqpURL)
        defer { broker.close() }
        try broker.declare(self)
    }
}

/// A durable quorum queue `<consumer>.<producer>` shared by the consumer's replicas, with a dead-letter queue
/// `<queue>.dead` that takes what failed `deliveryLimit` times. `#` among the types binds every type.
public struct QueueDefinition: Sendable {
    public var consumer: String
    public var producer: String
    public var types: [String]
    public var deliveryLimit: Int

    public init(consumer: String, producer: String, types: [String], deliveryLimit: Int = 5) {
        self.consumer = consumer
        self.producer = producer
        self.types = types
        self.deliveryLimit = deliveryLimit
    }

    public var name: String { "\(consumer).\(producer)" }
    public var deadLetterName: String { "\(name).dead" }
    public var exchange: String { Topology.exchange(of: producer) }
}

extension AMQPConnection {
    /// Declares a service's exchanges, queues and bindings; repeating it changes nothing.
    func declare(_ topology: Topology) throws {
        for exchange in Set(topology.exchanges).sorted() {
            try declareExchange(exchange, type: "topic")
        }
        for queue in topology.queues {
            try declareQueue(queue.deadLetterName, arguments: [("x-queue-type", .string("quorum"))])
            try declareQueue(
                queue.name,
                arguments: [
                    ("x-queue-type", .string("quorum")),
                    ("x-delivery-limit", .integer(Int64(queue.deliveryLimit))),
                    ("x-dead-letter-exchange", .string("")),
                    ("x-dead-letter-routing-key", .string(queue.deadLetterName)),
                ])
            for type in queue.types {
                try bindQueue(queue.name, exchange: queue.exchange, routingKey: type)
            }
        }
    }
}
