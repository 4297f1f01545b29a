import Contracts
import Foundation
import Logging
import NIOConcurrencyHelpers
import Postgres
import ServiceLifecycle
import TestSupport
import Testing

@testable import Messaging

/// An event of the tests' own producer.
struct ThingHappened: Event {
    static let type = "thing.happened"
    var thingId: UUID
    var sequence: Int
    var isPoison = false
    var version: Int64 = 1
    var aggregateId: UUID { thingId }
}

/// An event the consumer handled in an earlier version.
struct ThingForgotten: Event {
    static let type = "thing.forgotten"
    var thingId: UUID
    var version: Int64 = 1
    var aggregateId: UUID { thingId }
}

/// A producer and a consumer service, each with its own database, on a vhost of their own.
struct MessagingFixture {
    static let migrations = [
        PostgresMigrator.messagingDirectory,
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Migrations"),
    ]
    static let producerTopology = Topology(service: "producer", publishes: [ThingHappened.type])
    static let consumerTopology: Topology = {
        var handlers = EventHandlers()
        handlers.on(ThingHappened.self, from: "producer") { event, connection in
            struct Poisoned: Error {}
            if event.isPoison { throw Poisoned() }
            try connection.query(
                "INSERT INTO applied (event_id, sequence) VALUES (\(event.thingId), \(event.sequence))")
        }
        return Topology(service: "consumer", handlers: handlers, deliveryLimit: 3)
    }()

    let broker: TestBroker
    let producer: TestDatabase
    let consumer: TestDatabase
    let status = BrokerStatus()

    /// A fixture whose consumer's queue is already declared, as a consumer that ran once leaves it.
    static func make() async throws -> MessagingFixture {
        let broker = try await TestBroker.make()
        try consumerTopology.declare(amqpURL: broker.url)
        return MessagingFixture(
            broker: broker, producer: try await TestDatabase.make(migrations: migrations),
            consumer: try await TestDatabase.make(migrations: migrations))
    }

    var relay: OutboxRelay {
        OutboxRelay(
            topology: Self.producerTopology, postgresURL: producer.url, amqpURL: broker.url, status: status,
            logger: TestEnvironment.logger)
    }

    func consumerService() -> EventConsumer {
        EventConsumer(
            topology: Self.consumerTopology, postgresURL: consumer.url, amqpURL: broker.url, status: status,
            logger: TestEnvironment.logger)
    }

    /// Writes events to the producer's outbox, one transaction each.
    func emit(_ events: [ThingHappened]) async throws {
        for event in events {
            try await producer.pool.transaction { connection in try Outbox.append(event, on: connection) }
        }
    }

    func appliedSequences() async throws -> [Int] {
        try await consumer.pool.query("SELECT sequence FROM applied ORDER BY sequence").map {
            try $0.decode("sequence")
        }
    }

    /// Whether the relay has published and marked sent every row of the producer's outbox.
    func outboxIsDrained() async throws -> Bool {
        try await producer.pool.query("SELECT 1 FROM outbox_unsent").isEmpty
    }

    /// How many deliveries the consumer has applied (or found already applied) and acknowledged from its queue.
    var consumed: Int {
        status.consumedCounts["consumer.producer", default: 0]
    }

    /// Whether everything the relay published has been taken off the consumer's queue, so that `consumed` is final.
    func everythingPublishedIsConsumed() async throws -> Bool {
        guard try await outboxIsDrained() else { return false }
        return try await broker.messageCounts()["consumer.producer"] == 0
    }

    /// Runs the relay and the consumer while `body` runs, then shuts them down gracefully.
    func running(_ body: () async throws -> Void) async throws {
        try await runBriefly([relay, consumerService()], while: body)
        try? await broker.delete()
    }
}

@Suite(.serialized, .timeLimit(.minutes(5))) struct MessagingTests {
    @Test func aConnectionThatFailsThrowsAndFreesItsStateOnce() {
        for url in [
            "amqp://nobody:wrong@127.0.0.1:1/%2F", "not a url", "amqp://nobody:wrong@127.0.0.1:5672/no-such-vhost",
        ] {
            #expect(throws: AMQPError.self) { try AMQPConnection(url: url, connectTimeout: 1) }
        }
    }

    @Test func anEventWrittenToTheOutboxReachesTheConsumerExactlyOnce() async throws {
        let fixture = try await MessagingFixture.make()
        let events = (1...50).map { ThingHappened(thingId: UUID(), sequence: $0) }

        try await fixture.running {
            try await fixture.emit(events)
            try await eventually("the 50 events applied") { try await fixture.appliedSequences().count >= 50 }
            try await eventually("the outbox drained and the queue emptied") {
                try await fixture.everythingPublishedIsConsumed()
            }
        }

        #expect(try await fixture.appliedSequences() == Array(1...50))
        #expect(fixture.consumed == 50)
    }

    @Test func theStreamResumesWithNothingLostWhenTheBrokerClosesConnections() async throws {
        let fixture = try await MessagingFixture.make()
        let events = (1...200).map { ThingHappened(thingId: UUID(), sequence: $0) }

        try await fixture.running {
            try await fixture.emit(Array(events[0..<100]))
            try await eventually("20 events applied") { try await fixture.appliedSequences().count >= 20 }
            try await fixture.broker.closeAllConnections()
            try await fixture.emit(Array(events[100...]))
            try await eventually("the 200 events applied", timeout: 60) {
                try await fixture.appliedSequences().count >= 200
            }
        }

        #expect(try await fixture.appliedSequences() == Array(1...200))
        #expect(fixture.status.connectCounts["relay", default: 0] >= 2)
        #expect(fixture.status.connectCounts["consumer consumer.producer", default: 0] >= 2)
    }

    @Test func sentOutboxRowsAndRememberedMessageIdsArePrunedWhenOld() async throws {
        let fixture = try await MessagingFixture.make()
        let (oldestSent, oldSent, recentSent, oldAfterIt) = (UUID(), UUID(), UUID(), UUID())
        let (oldMessage, recentMessage) = (UUID(), UUID())
        // In seq order, all sent: two rows made long ago, one made yesterday, and one made long ago.
        for (id, daysAgo) in [(oldestSent, 9.0), (oldSent, 8.0), (recentSent, 1.0), (oldAfterIt, 8.0)] {
            try await fixture.producer.pool.query(
                """
                INSERT INTO outbox (id, type, schema_version, aggregate_id, version, payload, created_at)
                VALUES (\(id), 'thing.happened', 1, \(UUID()), 1, '{}', \(Date().addingTimeInterval(-daysAgo * 24 * 3600)))
                """)
        }
        for (id, daysAgo) in [(oldMessage, 15.0), (recentMessage, 13.0)] {
            try await fixture.consumer.pool.query(
                "INSERT INTO inbox (message_id, received_at) VALUES (\(id), \(Date().addingTimeInterval(-daysAgo * 24 * 3600)))"
            )
        }

        try await fixture.running {
            try await eventually("the old outbox rows and the old message id pruned") {
                let outboxRows = try await fixture.producer.pool.query("SELECT 1 FROM outbox").count
                let inboxRows = try await fixture.consumer.pool.query("SELECT 1 FROM inbox").count
                return outboxRows == 2 && inboxRows == 1
            }
        }
        let outbox = try await fixture.producer.pool.query("SELECT id FROM outbox ORDER BY seq").map {
            try $0.decode("id", as: UUID.self)
        }
        let inbox = try await fixture.consumer.pool.query("SELECT message_id FROM inbox").map {
            try $0.decode("message_id", as: UUID.self)
        }
        // Once the row before it is due too, the last goes with it, but a row made as long ago and not sent stays.
        let unsent = UUID()
        try await fixture.producer.pool.transaction { connection in
            try connection.query(
                "UPDATE outbox SET created_at = \(Date().addingTimeInterval(-8 * 24 * 3600)) WHERE id = \(recentSent)")
            try Outbox.append(ThingHappened(thingId: unsent, sequence: 1), on: connection)
            try connection.query(
                "UPDATE outbox SET created_at = \(Date().addingTimeInterval(-9 * 24 * 3600)) WHERE aggregate_id = \(unsent)"
            )
        }
        let prunedWhenAllAreDue = try await fixture.producer.pool.withConnection { try Outbox.prune(on: $0) }
        let outboxLeft = try await fixture.producer.pool.query("SELECT aggregate_id FROM outbox").map {
            try $0.decode("aggregate_id", as: UUID.self)
        }

        // NB: a due row behind one not yet due waits for it: the prune follows seq and stops at the first.
        #expect(outbox == [recentSent, oldAfterIt])
        #expect(inbox == [recentMessage])
        #expect(prunedWhenAllAreDue == 2 && outboxLeft == [unsent])
    }

    @Test func aMessageDeliveredTwiceIsAppliedOnce() async throws {
        let fixture = try await MessagingFixture.make()
        let event = ThingHappened(thingId: UUID(), sequence: 1)

        try await fixture.running {
            try await fixture.emit([event])
            // NB: the consumer may apply the event before the relay marks its row sent; a row reset before that
            // would be marked sent again and never go twice.
            try await eventually("the first copy applied, acknowledged and its row marked sent") {
                guard try await fixture.appliedSequences() == [1], fixture.consumed == 1 else { return false }
                return try await fixture.outboxIsDrained()
            }
            // The relay publishes the same outbox row, with the same message id, a second time.
            try await fixture.producer.pool.query("INSERT INTO outbox_unsent SELECT seq FROM outbox")
            try await fixture.producer.pool.query("SELECT pg_notify('outbox', '')")
            try await eventually("the second copy taken and acknowledged by the consumer") { fixture.consumed == 2 }
        }
        let inbox = try await fixture.consumer.pool.query("SELECT count(*) AS n FROM inbox").first?.decode(
            "n", as: Int.self)

        #expect(try await fixture.appliedSequences() == [1])
        #expect(inbox == 1)
    }

    @Test func aMessageThatAlwaysFailsIsDeadLetteredAndTheRestFlows() async throws {
        let fixture = try await MessagingFixture.make()
        let poison = ThingHappened(thingId: UUID(), sequence: 1, isPoison: true)
        let good = (2...6).map { ThingHappened(thingId: UUID(), sequence: $0) }

        var counts: [String: Int] = [:]
        try await fixture.running {
            try await fixture.emit([poison] + good)
            try await eventually("the poison dead-lettered and the other five applied", timeout: 30) {
                let applied = try await fixture.appliedSequences().count
                return try await fixture.broker.messageCounts()["consumer.producer.dead"] == 1 && applied == 5
            }
            counts = try await fixture.broker.messageCounts()
        }

        #expect(try await fixture.appliedSequences() == Array(2...6))
        #expect(counts["consumer.producer.dead"] == 1)
        #expect(counts["consumer.producer"] == 0)
    }

    @Test func aTypeTheConsumerNoLongerHandlesIsDroppedAndItsBindingRemoved() async throws {
        let fixture = try await MessagingFixture.make()
        var earlier = EventHandlers()
        earlier.on(ThingHappened.self, from: "producer") { _, _ in }
        earlier.on(ThingForgotten.self, from: "producer") { _, _ in }
        try Topology(service: "consumer", handlers: earlier, deliveryLimit: 3).declare(amqpURL: fixture.broker.url)
        let forgotten = "producer.events -> consumer.producer: thing.forgotten"
        let boundBefore = try await fixture.broker.bindings().contains(forgotten)

        var counts: [String: Int] = [:]
        var boundAfter = true
        try await fixture.running {
            try await fixture.producer.pool.transaction { try Outbox.append(ThingForgotten(thingId: UUID()), on: $0) }
            try await fixture.emit([ThingHappened(thingId: UUID(), sequence: 1)])
            try await eventually("the event applied and the forgotten type's binding removed", timeout: 30) {
                boundAfter = try await fixture.broker.bindings().contains(forgotten)
                return try await fixture.appliedSequences() == [1] && !boundAfter
            }
            counts = try await fixture.broker.messageCounts()
        }

        #expect(boundBefore)
        #expect(!boundAfter)
        #expect(try await fixture.appliedSequences() == [1])
        #expect(counts["consumer.producer.dead"] == 0)
        #expect(counts["consumer.producer"] == 0)
    }

    @Test func twoRelaysTogetherDeliverEveryEventOnce() async throws {
        let fixture = try await MessagingFixture.make()
        let events = (1...100).map { ThingHappened(thingId: UUID(), sequence: $0) }
        try await runBriefly([fixture.relay, fixture.relay, fixture.consumerService()]) {
            try await fixture.emit(events)
            try await eventually("the 100 events applied") { try await fixture.appliedSequences().count >= 100 }
            try await eventually("the outbox drained and the queue emptied") {
                try await fixture.everythingPublishedIsConsumed()
            }
        }
        let inbox = try await fixture.consumer.pool.query("SELECT count(*) AS n FROM inbox").first?.decode(
            "n", as: Int.self)

        #expect(try await fixture.appliedSequences() == Array(1...100))
        #expect(inbox == 100)
        #expect(fixture.consumed == 100)
    }

    @Test func aRowCommittedAfterALaterOneIsPublishedToo() async throws {
        let fixture = try await MessagingFixture.make()
        let (first, second) = (ThingHappened(thingId: UUID(), sequence: 1), ThingHappened(thingId: UUID(), sequence: 2))
        let slow = try PostgresConnection(url: fixture.producer.url)
        try await fixture.running {
            // The first row takes its place in the outbox before the second, and commits after it is published.
            try slow.query("BEGIN")
            try Outbox.append(first, on: slow)
            try slow.query("SELECT 1")
            try await fixture.emit([second])
            try await eventually("the second event applied") { try await fixture.appliedSequences() == [2] }
            try slow.query("COMMIT")
            try await eventually("the first event applied") { try await fixture.appliedSequences() == [1, 2] }
        }
        let written: [Int] = try await fixture.producer.pool.query(
            "SELECT (payload->>'sequence')::int AS sequence FROM outbox ORDER BY seq"
        ).map { try $0.decode("sequence") }

        #expect(written == [1, 2], "the first event's row came first in the outbox")
    }
}

@Suite struct TimeOrderedIDTests {
    @Test func idsSortByTheMillisecondTheyWereMadeAndCarryVersion7() {
        // NB: half a millisecond past 123, so that rounding never moves one of them into its neighbour's millisecond.
        let start = Date(timeIntervalSince1970: 1_795_000_000.1235)
        let ids = (0..<1000).map { UUID.timeOrdered(at: start.addingTimeInterval(Double($0) / 1000)) }
        #expect(Set(ids).count == 1000)
        // Lowercase hex of a big-endian time sorts as the times do, and so do PostgreSQL's uuid comparisons.
        #expect(ids.map { $0.uuidString } == ids.map { $0.uuidString }.sorted())
        for id in ids {
            #expect(id.uuid.6 >> 4 == 7)
            #expect(id.uuid.8 >> 6 == 0b10)
        }
        let first = ids[0].uuid
        let milliseconds = [first.0, first.1, first.2, first.3, first.4, first.5].reduce(UInt64(0)) {
            $0 << 8 | UInt64($1)
        }
        #expect(milliseconds == 1_795_000_000_123)
    }
}

@Suite struct LiveLoopbackTests {
    @Test func aCommittedBatchsLiveMessagesReachTheProcesssOwnChannelForItsExchangeOnly() {
        let channel = LiveChannel(
            exchange: "live.test", amqpURL: "amqp://nobody:wrong@127.0.0.1:1/%2F", status: BrokerStatus(),
            logger: Logger(label: "test"))
        let received = NIOLockedValueBox<[String]>([])
        channel.onReceive { key, body in
            received.withLockedValue { $0.append("\(key) \(String(decoding: body, as: UTF8.self))") }
        }
        let loopback = LiveLoopback()
        let messages = [
            LiveMessage(exchange: "live.test", routingKey: "user.a", body: Data("1".utf8)),
            LiveMessage(exchange: "elsewhere", routingKey: "user.a", body: Data("2".utf8)),
            LiveMessage(exchange: "live.test", routingKey: "user.b", body: Data("3".utf8)),
        ]

        loopback.deliver(messages)
        #expect(received.withLockedValue { $0 }.isEmpty)

        loopback.connect(channel)
        loopback.deliver(messages)
        #expect(received.withLockedValue { $0 } == ["user.a 1", "user.b 3"])
    }
}
