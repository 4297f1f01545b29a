import Contracts
import Foundation
import HummingbirdTesting
import MatchingTestSupport
import ServiceKit
import TestSupport
import Testing

@testable import Delivery
@testable import MatchingCore

/// A match's live location on real PostgreSQL and RabbitMQ: what matching publishes on notifications' live exchange,
/// heard by a queue of the test's own bound to the users' keys as a notifications replica binds its sockets' users.
@Suite struct DeliveryLiveLocationTests {
    @Test func anOrdererSeesTheirDelivererAtMostOnceASecondWithTheLastPositionAndNothingAfterTheMatch() async throws {
        let app = try await MatchingTestApp.make()
        let (deliverer, orderer, stranger) = (
            Identity.student("Eero"), Identity.student("Olli"), Identity.student("Sanna")
        )
        let (delivererToken, ordererToken) = (try await app.token(for: deliverer), try await app.token(for: orderer))
        let strangerToken = try await app.token(for: stranger)
        _ = try await app.checkIn(deliverer)
        _ = try await app.order(orderer, "Lunch")
        let offer = try #require(try await app.pendingOffer(for: deliverer))
        let match = try await app.steps.accept(offerId: offer, caller: deliverer)
        let path = "/v1/matches/\(match.id)/location"

        try await app.test { client in
            try await LiveListener.listening(to: [deliverer, orderer, stranger], in: app.broker) { listener in
                let (badLat, latProblem) = try await client.call(
                    .put, path, token: delivererToken, body: ["lat": 91, "lon": 24.9])
                let (badLon, lonProblem) = try await client.call(
                    .put, path, token: delivererToken, body: ["lat": 60.17, "lon": -181])
                let (byOrderer, _) = try await client.call(
                    .put, path, token: ordererToken, body: ["lat": 60.17, "lon": 24.9])
                let (byStranger, _) = try await client.call(
                    .put, path, token: strangerToken, body: ["lat": 60.17, "lon": 24.9])
                let (unknown, _) = try await client.call(
                    .put, "/v1/matches/\(UUID())/location", token: delivererToken, body: ["lat": 60.17, "lon": 24.9])

                #expect(badLat == .badRequest && latProblem["field"] as? String == "lat")
                #expect(badLon == .badRequest && lonProblem["field"] as? String == "lon")
                #expect(byOrderer == .notFound && byStranger == .notFound && unknown == .notFound)

                let sending = try await LiveRoute.sendRoute(to: path, token: delivererToken, client)
                let last = LiveRoute.route[9]
                // NB: a bound on a hang, not a speed: the frames go through a paced timer and the broker.
                try await eventually("the last position at the orderer", timeout: 60) {
                    listener.frames(to: orderer).last?.data.lat == last.lat
                }
                let (_, active) = try await client.call(.get, "/v1/matches/\(match.id)", token: ordererToken)

                let frames = listener.frames(to: orderer)
                LiveRoute.expectPaced(frames, sentOver: sending)
                #expect(frames.allSatisfy { $0.data.matchId == match.id && $0.data.rideId == nil })
                #expect(listener.frames(to: stranger).isEmpty && listener.frames(to: deliverer).isEmpty)
                let position = active["delivererPosition"] as? [String: Any]
                #expect(position?["lat"] as? Double == last.lat && position?["lon"] as? Double == last.lon)

                try await LiveRoute.expect(
                    .ok, client.call(.post, "/v1/matches/\(match.id)/complete", token: delivererToken))
                try await LiveRoute.expect(
                    .ok, client.call(.post, "/v1/matches/\(match.id)/complete", token: ordererToken))
                let heardBefore = listener.frames(to: orderer).count
                let (afterEnd, _) = try await client.call(
                    .put, path, token: delivererToken, body: ["lat": last.lat, "lon": last.lon])
                try await listener.settle(app, hearing: orderer)
                let (_, completed) = try await client.call(.get, "/v1/matches/\(match.id)", token: ordererToken)
                let stored: Int = try await app.database.pool.query(
                    "SELECT count(*) AS kept FROM matches WHERE id = \(match.id) AND deliverer_lat IS NOT NULL"
                ).first!.decode("kept")

                #expect(afterEnd == .conflict)
                #expect(listener.frames(to: orderer).count == heardBefore)
                #expect(completed["status"] as? String == "completed" && completed["delivererPosition"] == nil)
                #expect(stored == 0)
            }
        }
    }
}
