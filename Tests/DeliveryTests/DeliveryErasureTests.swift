import Contracts
import Foundation
import MatchingCore
import MatchingTestSupport
import Messaging
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import Delivery

/// A student who deleted their account leaves the delivery flow: what they had open closes or is withdrawn, and what
/// others keep of them names no one.
@Suite struct DeliveryErasureTests {
    @Test func aDeletedAccountClosesWhatWasOpenAndLeavesNoTraceOfThePerson() async throws {
        let app = try await MatchingTestApp.make()
        let (pirkko, olli) = (Identity.student("Pirkko Poistuva"), Identity.student("Olli Odottaja"))
        let bio = "Rakastan ruisleipää ja hiljaisia kirjastoja"
        try await app.register(pirkko, bio: bio)
        try await app.register(olli)
        // A finished delivery to Pirkko by Olli.
        _ = try await app.checkIn(olli)
        let finishedOrder = try await app.order(pirkko, "Salmiakkia Pirkon tapaan")
        let finished = try await app.steps.accept(
            offerId: try #require(try await app.pendingOffer(for: olli)), caller: olli)
        _ = try await app.steps.completeMatch(id: finished.id, caller: olli)
        _ = try await app.steps.completeMatch(id: finished.id, caller: pirkko)
        // Pirkko delivers Olli's coffee, and is on the way.
        let pirkkosRun = try await app.checkIn(pirkko)
        let coffee = try await app.order(olli, "Kahvi Ollille", run: pirkkosRun.id)
        let open = try await app.steps.accept(
            offerId: try #require(try await app.pendingOffer(for: pirkko)), caller: pirkko)
        _ = try await app.steps.reportPosition(GeoPoint(lat: 60.1702, lon: 24.9486), matchId: open.id, caller: pirkko)
        // And Pirkko's next order is offered to Olli's run.
        let waiting = try await app.order(pirkko, "Karjalanpiirakoita kolme")
        #expect(waiting.status == .offered)

        let deleted = UserDeleted(userId: pirkko.userId, campus: pirkko.campus)
        try await app.applyAsConsumer(deleted)

        let closed = try await app.steps.match(id: open.id, caller: olli)
        #expect(closed.status == .cancelled)
        #expect(closed.delivererName == ErasedPerson.name)
        #expect(closed.delivererPosition == nil)
        let closings = try await app.events().filter {
            $0.type == MatchClosed.type
                && ($0.payload["matchId"] as? String)?.lowercased() == open.id.uuidString.lowercased()
        }
        #expect(closings.map { $0.payload["reason"] as? String } == ["blocked"])
        #expect(try await app.steps.order(id: coffee.id, caller: olli).status == .waiting)
        #expect(try await app.pendingOffer(for: olli) == nil)
        let runs = try await app.steps.openRuns(restaurantId: MatchingTestApp.unicafe.placeId, caller: olli, from: nil)
        #expect(!runs.map(\.id).contains(pirkkosRun.id))
        let requests = try await app.steps.openOrders(caller: olli, from: nil, restaurantId: nil, limit: 20, after: nil)
        #expect(!requests.orders.map(\.id).contains(waiting.id))
        let kept = try await app.steps.match(id: finished.id, caller: olli)
        #expect(kept.status == .completed && kept.ordererName == ErasedPerson.name && kept.items.isEmpty)
        #expect(kept.id == finished.id && finishedOrder.items != kept.items)
        let traces = try await app.traces(
            of: [pirkko.name, bio, "Salmiakkia Pirkon tapaan", "Karjalanpiirakoita kolme"])
        #expect(traces.isEmpty)
        #expect(try await app.traces(of: [olli.name, "Kahvi Ollille"]).count == 2)

        // Their token still works for a few minutes, but writes nothing that names them again.
        await #expect(throws: MatchingError.forbidden("Your account is suspended or deleted.")) {
            _ = try await app.order(pirkko, "Pulla")
        }
        // Redelivered, the event changes nothing more.
        let before = try await app.snapshot()
        try await app.applyAsConsumer(deleted)
        #expect(try await app.snapshot() == before)
    }
}
