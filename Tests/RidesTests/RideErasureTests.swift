import Contracts
import Foundation
import MatchingTestSupport
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import MatchingCore
@testable import Rides

/// A student who deleted their account leaves the rides flow: their request and the ride they drive are cancelled,
/// their driver profile goes, and the rides others keep name no one.
@Suite struct RideErasureTests {
    @Test func aDeletedAccountCancelsTheirRidesAndLeavesNoTraceOfThePerson() async throws {
        let app = try await MatchingTestApp.make()
        let steps = try app.steps
        let (pirkko, kalle) = (Identity.student("Pirkko Poistuva"), Identity.student("Kalle Kuski"))
        let bio = "Rakastan ruisleipää"
        try await app.register(pirkko, bio: bio)
        try await app.register(kalle)
        let here = GeoPoint(lat: MatchingTestApp.porthania.latitude, lon: MatchingTestApp.porthania.longitude)
        for (driver, car) in [(kalle, "Red Skoda"), (pirkko, "Pirkon sininen Volvo")] {
            _ = try await steps.saveDriver(car: car, seats: 3, caller: driver)
            _ = try await steps.reportPosition(here, caller: driver)
        }
        let pickup = PlaceChoice.place(MatchingTestApp.porthania.placeId)
        // A finished ride of Pirkko's with Kalle.
        let finished = try await steps.requestRide(
            id: nil, RideDraft(pickup: pickup, dropoff: nil, note: "Pirkko odottaa portilla"), caller: pirkko)
        _ = try await steps.accept(finished.id, caller: kalle)
        let code = try #require(try await steps.ride(finished.id, caller: pirkko)?.code)
        for step in [RideStep.arrived, .started, .completed] {
            _ = try await steps.mark(finished.id, step, code: step == .started ? code : nil, caller: kalle)
        }
        // Pirkko drives Kalle now, and asks for a ride of her own.
        let driven = try await steps.requestRide(
            id: nil, RideDraft(pickup: pickup, dropoff: nil, note: nil), caller: kalle)
        _ = try await steps.accept(driven.id, caller: pirkko)
        let request = try await steps.requestRide(
            id: nil, RideDraft(pickup: pickup, dropoff: nil, note: "Pirkon toinen kyyti"), caller: pirkko)

        let deleted = UserDeleted(userId: pirkko.userId, campus: pirkko.campus)
        try await app.applyAsConsumer(deleted)

        let cancelled = try #require(try await steps.ride(driven.id, caller: kalle))
        #expect(cancelled.status == .cancelled)
        #expect(cancelled.driver?.name == ErasedPerson.name && cancelled.driver?.car == "")
        let matchId = try #require(cancelled.matchId)
        let closings = try await app.events().filter {
            $0.type == MatchClosed.type
                && ($0.payload["matchId"] as? String)?.lowercased() == matchId.uuidString.lowercased()
        }
        #expect(closings.map { $0.payload["reason"] as? String } == ["blocked"])
        let requests = try await steps.openRequests(near: here, radiusMeters: 1000, limit: 20, caller: kalle)
        #expect(!requests.requests.map(\.id).contains(request.id))
        let ridesCancelled = try await app.events().filter {
            $0.type == RideCancelled.type
                && ($0.payload["rideId"] as? String)?.lowercased() == request.id.uuidString.lowercased()
        }
        #expect(ridesCancelled.map { $0.payload["reason"] as? String } == ["rider"])
        let kept = try #require(try await steps.ride(finished.id, caller: kalle))
        #expect(kept.status == .completed && kept.riderName == ErasedPerson.name && kept.note == nil)
        let profiles = try await app.database.pool.query(
            """
            SELECT (SELECT count(*) FROM ride_drivers WHERE user_id = \(pirkko.userId))
                + (SELECT count(*) FROM ride_driver_positions WHERE driver_id = \(pirkko.userId)) AS n
            """
        ).first!.decode("n", as: Int64.self)
        #expect(profiles == 0)
        let traces = try await app.traces(
            of: [pirkko.name, bio, "Pirkko odottaa portilla", "Pirkon toinen kyyti", "Pirkon sininen Volvo"])
        #expect(traces.isEmpty)
        #expect(try await app.traces(of: [kalle.name, "Red Skoda"]).count == 2)

        await #expect(throws: MatchingError.forbidden("Your account is suspended or deleted.")) {
            _ = try await steps.saveDriver(car: "Volvo", seats: 3, caller: pirkko)
        }
        let before = try await app.snapshot()
        try await app.applyAsConsumer(deleted)
        #expect(try await app.snapshot() == before)
    }
}
