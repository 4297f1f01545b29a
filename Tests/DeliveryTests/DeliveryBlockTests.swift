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

/// A block, either way round: the two leave each other's runs, open requests and offers, and what was open between
/// them closes.
@Suite struct DeliveryBlockTests {
    @Test func aBlockWithdrawsTheOfferAndHidesEachFromTheOtherBothWays() async throws {
        let app = try await MatchingTestApp.make()
        let (aino, olli) = (Identity.student("Aino"), Identity.student("Olli"))
        let order = try await app.order(olli, "Soup")
        let run = try await app.checkIn(aino)
        let offer = try #require(try await app.pendingOffer(for: aino))

        // Aino blocks Olli: the offer goes, and nothing of either reaches the other.
        try await app.applyAsConsumer(
            UserBlocked(blockerId: aino.userId, blockedId: olli.userId, campus: "helsinki.fi"))

        #expect(try await app.pendingOffer(for: aino) == nil)
        await #expect(throws: MatchingError.self) { try await app.steps.accept(offerId: offer, caller: aino) }
        #expect(try await app.steps.order(id: order.id, caller: olli).status == .waiting)
        let runs = try await app.steps.openRuns(
            restaurantId: MatchingTestApp.unicafe.placeId, caller: olli, from: nil)
        #expect(runs.isEmpty)
        let open = try await app.steps.openOrders(caller: aino, from: nil, restaurantId: nil, limit: 20, after: nil)
        #expect(open.orders.isEmpty)
        await #expect(throws: MatchingError.notFound("order")) {
            try await app.steps.take(orderId: order.id, runId: run.id, caller: aino)
        }
        await #expect(throws: MatchingError.notFound("run at that restaurant")) {
            _ = try await app.order(olli, "Tea", run: run.id)
        }
        // A new order of Olli's is offered to nobody: Aino's is the only run.
        let second = try await app.order(olli, "Coffee")
        #expect(second.status == .waiting)

        // Lifted, the block leaves them seeing each other again.
        try await app.applyAsConsumer(UserUnblocked(blockerId: aino.userId, blockedId: olli.userId))
        let again = try await app.steps.openRuns(
            restaurantId: MatchingTestApp.unicafe.placeId, caller: olli, from: nil)
        #expect(again.map(\.id) == [run.id])
    }

    @Test func aBlockClosesTheActiveMatchWithItsChatAndTheOrderWaitsForSomeoneElse() async throws {
        let app = try await MatchingTestApp.make()
        let (eero, olli) = (Identity.student("Eero"), Identity.student("Olli"))
        let order = try await app.order(olli, "Soup")
        _ = try await app.checkIn(eero)
        let offer = try #require(try await app.pendingOffer(for: eero))
        let match = try await app.steps.accept(offerId: offer, caller: eero)

        // The orderer blocks the deliverer.
        try await app.applyAsConsumer(
            UserBlocked(blockerId: olli.userId, blockedId: eero.userId, campus: "helsinki.fi"))

        #expect(try await app.steps.match(id: match.id, caller: olli).status == .cancelled)
        #expect(try await app.steps.order(id: order.id, caller: olli).status == .waiting)
        #expect(try await app.pendingOffer(for: eero) == nil)
        let closed = try await app.events().filter { $0.type == "match.closed" }
        #expect(closed.count == 1)
        #expect(closed.first?.payload["reason"] as? String == "blocked")
        #expect((closed.first?.payload["matchId"] as? String)?.lowercased() == match.id.uuidString.lowercased())
        let held: Int = try await app.database.pool.query("SELECT held FROM runs").first!.decode("held")
        #expect(held == 0)
    }

    @Test func aSuspendedDelivererIsHiddenFromEveryoneAsIfEveryoneHadBlockedThem() async throws {
        let app = try await MatchingTestApp.make()
        let (aino, olli, eero) = (Identity.student("Aino"), Identity.student("Olli"), Identity.student("Eero"))
        let run = try await app.checkIn(aino)
        try await app.applyAsConsumer(UserSuspended(userId: aino.userId, campus: "helsinki.fi"))

        for viewer in [olli, eero] {
            let runs = try await app.steps.openRuns(
                restaurantId: MatchingTestApp.unicafe.placeId, caller: viewer, from: nil)
            #expect(runs.isEmpty)
        }
        let order = try await app.order(olli, "Soup")
        #expect(order.status == .waiting)
        #expect(try await app.pendingOffer(for: aino) == nil)
        await #expect(throws: MatchingError.notFound("run at that restaurant")) {
            _ = try await app.order(eero, "Tea", run: run.id)
        }
    }

    @Test func aSuspensionClosesTheSuspendedStudentsOpenMatchesAndOffers() async throws {
        let app = try await MatchingTestApp.make()
        let (eero, olli, oona) = (Identity.student("Eero"), Identity.student("Olli"), Identity.student("Oona"))
        _ = try await app.checkIn(eero, capacity: 2)
        _ = try await app.order(olli, "Soup")
        let match = try await app.steps.accept(
            offerId: try #require(try await app.pendingOffer(for: eero)), caller: eero)
        let offered = try await app.order(oona, "Tea")
        #expect(offered.status == .offered)

        try await app.applyAsConsumer(UserSuspended(userId: eero.userId, campus: "helsinki.fi"))

        #expect(try await app.steps.match(id: match.id, caller: olli).status == .cancelled)
        #expect(try await app.pendingOffer(for: eero) == nil)
        #expect(try await app.steps.order(id: offered.id, caller: oona).status == .waiting)
        let closed = try await app.events().filter { $0.type == "match.closed" }
        #expect(closed.map { $0.payload["reason"] as? String } == ["blocked"])
    }
}
