import Contracts
import Foundation
import MatchingTestSupport
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import MatchingCore
@testable import Rides

/// A block between a rider and a driver: neither hears of the other's requests, and a ride under way is cancelled.
@Suite struct RideBlockTests {
    @Test func aBlockHidesRequestsBothWaysAndCancelsTheRideUnderWayWithItsChat() async throws {
        let app = try await MatchingTestApp.make()
        let steps = try app.steps
        let (rider, driver) = (Identity.student("Riikka"), Identity.student("Kalle"))
        _ = try await steps.saveDriver(car: "Red Skoda", seats: 3, caller: driver)
        let here = GeoPoint(lat: MatchingTestApp.porthania.latitude, lon: MatchingTestApp.porthania.longitude)
        _ = try await steps.reportPosition(here, caller: driver)
        let draft = RideDraft(pickup: .place(MatchingTestApp.porthania.placeId), dropoff: nil, note: nil)
        let ride = try await steps.requestRide(id: nil, draft, caller: rider)
        _ = try await steps.accept(ride.id, caller: driver)

        try await app.applyAsConsumer(
            UserBlocked(blockerId: rider.userId, blockedId: driver.userId, campus: "helsinki.fi"))

        #expect(try await steps.ride(ride.id, caller: rider)?.status == .cancelled)
        let closed = try await app.events().filter { $0.type == "match.closed" }
        #expect(closed.map { $0.payload["reason"] as? String } == ["blocked"])
        let cancelled = try await app.events().filter { $0.type == "ride.cancelled" }
        #expect(cancelled.first?.payload["reason"] as? String == "blocked")

        // A new request of the rider's: the blocked driver neither finds it nor may take it.
        let second = try await steps.requestRide(id: nil, draft, caller: rider)
        let listed = try await steps.openRequests(near: here, radiusMeters: 1000, limit: 20, caller: driver)
        #expect(!listed.requests.map(\.id).contains(second.id))
        await #expect(throws: MatchingError.notFound("ride")) { try await steps.accept(second.id, caller: driver) }
        let offered: Int = try await app.database.pool.query(
            "SELECT count(*) AS n FROM ride_offers WHERE ride_id = \(second.id) AND driver_id = \(driver.userId)"
        ).first!.decode("n")
        #expect(offered == 0)
    }
}
