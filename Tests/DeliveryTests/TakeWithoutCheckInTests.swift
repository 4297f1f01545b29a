import Contracts
import Foundation
import MatchingCore
import MatchingTestSupport
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import Delivery

/// A deliverer who is not checked in anywhere takes an order from the open requests: one tap checks them in at one of
/// the order's restaurants, heading to its destination, and matches, in one transaction (racing an offer's accept:
/// `OpenOrdersTests`).
@Suite struct TakeWithoutCheckInTests {
    static func make() async throws -> MatchingTestApp {
        let app = try await MatchingTestApp.make()
        try await app.database.pool.transaction { connection in
            for place in [OpenOrdersTests.kaivopiha, OpenOrdersTests.fazer] {
                try ReadModels.applyPlace(place, version: 1, isRetired: false, on: connection)
            }
        }
        return app
    }

    /// Olli's order from Unicafe, Kaivopiha or Fazer to `destination`, headed where no run is, so that it waits.
    static func order(
        in app: MatchingTestApp, by olli: Identity,
        to destination: OrderDestination = .building(
            MatchingTestApp.farBuilding.placeId)
    ) async throws -> Order {
        try await app.steps.placeOrder(
            id: nil, caller: olli,
            restaurantIds: [
                MatchingTestApp.unicafe.placeId, OpenOrdersTests.kaivopiha.placeId, OpenOrdersTests.fazer.placeId,
            ],
            destination: destination, items: "Pulla", runId: nil)
    }

    @Test func theRestaurantNamedTheNearestToThePositionOrElseTheFirst() async throws {
        let app = try await Self.make()
        let nearKaivopiha = GeoPoint(lat: 60.16950, lon: 24.94610)
        let cases: [(TakeCheckIn, String)] = [
            (TakeCheckIn(restaurantId: OpenOrdersTests.fazer.placeId), "Fazer Café Kluuvikatu"),
            (TakeCheckIn(position: nearKaivopiha), "Unicafe Kaivopiha"),
            // The name wins over the position.
            (
                TakeCheckIn(restaurantId: OpenOrdersTests.fazer.placeId, position: nearKaivopiha),
                "Fazer Café Kluuvikatu"
            ),
            (TakeCheckIn(), "Unicafe Porthania"),
        ]
        for (index, (checkIn, restaurant)) in cases.enumerated() {
            let (aino, olli) = (Identity.student("Aino \(index)"), Identity.student("Olli \(index)"))
            let order = try await Self.order(in: app, by: olli)
            let match = try await app.steps.take(orderId: order.id, runId: nil, checkIn: checkIn, caller: aino)
            #expect(match.restaurant.name == restaurant, "\(checkIn)")
            #expect(match.destination.name == "Kallion kirjasto")
            let run: (status: String, held: Int, destination: UUID) = try await app.database.pool.query(
                "SELECT status, held, destination_id FROM runs WHERE id = \(match.runId)"
            ).first.map { (try $0.decode("status"), try $0.decode("held"), try $0.decode("destination_id")) }!
            #expect(run.held == 1 && run.destination == MatchingTestApp.farBuilding.placeId, "\(run)")
            try await app.expectOneActiveMatch(of: order.id)
        }
        let opened: Int = try await app.database.pool.query(
            "SELECT count(*) AS n FROM outbox WHERE type = \(RunOpened.type)"
        ).first!.decode("n")
        #expect(opened == cases.count)
    }

    @Test func anOrderToAPointSendsTheRunToTheBuildingNearest() async throws {
        let app = try await Self.make()
        let order = try await Self.order(
            in: app, by: .student("Olli"), to: .point(GeoPoint(lat: 60.17030, lon: 24.94850)))
        let match = try await app.steps.take(orderId: order.id, runId: nil, caller: .student("Aino"))
        let destination: UUID = try await app.database.pool.query(
            "SELECT destination_id FROM runs WHERE id = \(match.runId)"
        ).first!.decode("destination_id")
        #expect(destination == MatchingTestApp.porthania.placeId)
        #expect(match.destination.name == "Near Porthania")
    }

    @Test func aDelivererCheckedInElsewhereIsToldSoAndARetiredChoiceIsUnknown() async throws {
        let app = try await Self.make()
        let (aino, olli) = (Identity.student("Aino"), Identity.student("Olli"))
        let order = try await app.steps.placeOrder(
            id: nil, caller: olli, restaurantIds: [OpenOrdersTests.kaivopiha.placeId],
            destination: .building(MatchingTestApp.farBuilding.placeId), items: "Pulla", runId: nil)
        _ = try await app.checkIn(aino)
        await #expect(
            throws: MatchingError.conflict("Your run is at Unicafe Porthania, which the order does not name.")
        ) {
            try await app.steps.take(orderId: order.id, runId: nil, caller: aino)
        }
        try await app.database.pool.transaction { connection in
            try ReadModels.applyPlace(OpenOrdersTests.kaivopiha, version: 2, isRetired: true, on: connection)
        }
        await #expect(throws: MatchingError.notFound("restaurant")) {
            try await app.steps.take(orderId: order.id, runId: nil, caller: .student("Eero"))
        }
    }
}
