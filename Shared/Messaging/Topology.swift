import Contracts

/// Every exchange, queue and binding of the system, defined once here and declared idempotently by every process
/// at start, so that no event is published before the queues that need it exist.
public struct Topology: Sendable {
    /// One durable topic exchange per producing service: `<service>.events`.
    public var exchanges: [String]
    public var queues: [QueueDefinition]

    public init(exchanges: [String], queues: [QueueDefinition]) {
        self.exchanges = exchanges
        self.queues = queues
    }

    /// The queues a consumer service reads.
    public func queues(of consumer: String) -> [QueueDefinition] {
        queues.filter { $0.consumer == consumer }
    }

    /// Where notifications sends each user's feed entries live, routing key `user.<id>`: every notifications
    /// replica binds its own exclusive queue to the users whose sockets it holds.
    public static let liveExchange = "notifications.live"

    /// The exchange a producing service publishes to.
    public static func exchange(of service: String) -> String { "\(service).events" }

    /// Tarrare's topology. A consumer handles exactly the types bound here.
    public static let tarrare = Topology(
        exchanges: ["accounts", "places", "matching", "chat", "notifications"].map(exchange(of:)) + [liveExchange],
        queues: [
            QueueDefinition(consumer: "matching", producer: "accounts", types: [UserRegistered.type, UserUpdated.type]),
            QueueDefinition(consumer: "matching", producer: "places", types: [PlaceUpserted.type, PlaceRetired.type]),
            QueueDefinition(consumer: "chat", producer: "accounts", types: [UserRegistered.type, UserUpdated.type]),
            QueueDefinition(
                consumer: "chat", producer: "matching",
                types: [MatchAccepted.type, MatchCancelled.type, MatchCompleted.type]),
            QueueDefinition(
                consumer: "notifications", producer: "matching",
                types: [
                    OfferMade.type, OfferDeclined.type, OfferExpired.type, OfferWithdrawn.type, MatchAccepted.type,
                    MatchCancelled.type, MatchCompleted.type, OrderExpired.type, RunClosed.type,
                ]),
            QueueDefinition(
                consumer: "notifications", producer: "chat",
                types: [MessageSent.type, ConversationOpened.type, ConversationClosed.type]),
        ])
}

/// A durable quorum queue `<consumer>.<producer>` shared by the consumer's replicas, with a dead-letter queue
/// `<queue>.dead` that takes what failed `deliveryLimit` times.
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
    /// Declares the whole topology; repeating it changes nothing.
    func declare(_ topology: Topology) throws {
        for exchange in topology.exchanges {
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
