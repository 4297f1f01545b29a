import Foundation
import Postgres
import TestSupport
import Testing

@testable import Messaging

extension MessagingFixture {
    /// Writes `event` to the producer's outbox in one statement, as a chat message is sent, and hands its row to
    /// `handOff` once committed, on `ticket` (by default one given now).
    func emit(
        _ event: ThingHappened, handingTo handOff: OutboxHandOff, ticket given: OutboxHandOff.Ticket? = nil
    ) async throws {
        let ticket = given ?? handOff.ticket()
        let rows = try await producer.pool.query(
            """
            WITH source AS (SELECT 1), \(Outbox.commonTableExpressions(
                for: event, payload: "\(try JSONText(event))::jsonb", from: "source", ticket: ticket))
            SELECT (SELECT count(*) FROM notified) AS notified, o.* FROM outboxed o
            """)
        handOff.committed(ticket, rows: Array(rows), type: ThingHappened.type, schemaVersion: 1)
    }

    /// The sequences of the events applied, in the order the consumer applied them.
    func sequencesInOrderApplied() async throws -> [Int] {
        try await consumer.pool.query("SELECT sequence FROM applied ORDER BY position").map {
            try $0.decode("sequence")
        }
    }
}

@Suite(.serialized, .timeLimit(.minutes(5))) struct OutboxHandOffTests {
    @Test func rowsHandedToTheActiveRelayArePublishedOnceInOrderWithoutANotify() async throws {
        let fixture = try await MessagingFixture.make()
        let handOff = OutboxHandOff()
        let relay = OutboxRelay(
            topology: MessagingFixture.producerTopology, postgresURL: fixture.producer.url, amqpURL: fixture.broker.url,
            status: fixture.status, logger: TestEnvironment.logger, handOff: handOff)
        let listener = try PostgresConnection(url: fixture.producer.url)
        try listener.query("LISTEN outbox")
        // No relay is active: the statement wakes one with a NOTIFY.
        try await fixture.emit(ThingHappened(thingId: UUID(), sequence: 1), handingTo: handOff)
        #expect(try listener.waitForNotifications(timeout: 10).count == 1)

        try await runBriefly([relay, fixture.consumerService()]) {
            try await eventually("the relay active and taking rows") { !handOff.ticket().notifies }
            for sequence in 2...40 {
                try await fixture.emit(ThingHappened(thingId: UUID(), sequence: sequence), handingTo: handOff)
            }
            try await eventually("the 40 events applied") { try await fixture.appliedSequences().count >= 40 }
            try await eventually("the outbox drained and the queue emptied") {
                try await fixture.everythingPublishedIsConsumed()
            }
        }
        try? await fixture.broker.delete()

        #expect(try await fixture.sequencesInOrderApplied() == Array(1...40))
        #expect(fixture.consumed == 40)
        // NB: each NOTIFY is sent on its commit, before the row could reach the consumer.
        #expect(try listener.waitForNotifications(timeout: 0).isEmpty)
    }

    @Test func aRowNotHandedIsReadBeforeWhatIsHandedAfterIt() async throws {
        let fixture = try await MessagingFixture.make()
        let handOff = OutboxHandOff()
        let event = { ThingHappened(thingId: UUID(), sequence: $0) }

        // Given before the relay was active: NOTIFYs, and asks for a read before what comes after it.
        try await fixture.emit(event(1), handingTo: handOff)
        #expect(handOff.take().mustRead)
        handOff.activate()
        try await fixture.emit(event(2), handingTo: handOff)
        let handed = handOff.take()
        #expect(
            try handed.rows.map { try JSONDecoder().decode(ThingHappened.self, from: Data($0.payload.utf8)).sequence }
                == [2])
        #expect(!handed.mustRead)
        // Given to a term of the relay that ended: not handed, and read first.
        let ticket = handOff.ticket()
        handOff.deactivate()
        handOff.activate()
        try await fixture.emit(event(3), handingTo: handOff, ticket: ticket)
        let afterTheEnd = handOff.take()
        #expect(afterTheEnd.rows.isEmpty)
        #expect(afterTheEnd.mustRead)
        #expect(try await fixture.producer.pool.query("SELECT seq FROM outbox_unsent").count == 3)
    }
}
