import Contracts
import Foundation
import HummingbirdTesting
import MatchingTestSupport
import ServiceKit
import TestSupport
import Testing

@testable import MatchingCore
@testable import Rides

/// A ride's live location on real PostgreSQL and RabbitMQ: what matching publishes on notifications' live exchange,
/// heard by a queue of the test's own bound to the users' keys as a notifications replica binds its sockets' users.
@Suite struct RideLiveLocationTests {
    @Test func aRiderSeesTheirDriverAtMostOnceASecondWithTheLastPositionAndNothingAfterTheRide() async throws {
        let app = try await MatchingTestApp.make()
        let (driver, rider, stranger) = (
            Identity.student("Ville"), Identity.student("Riikka"), Identity.student("Sanna")
        )
        let (driverToken, riderToken) = (try await app.token(for: driver), try await app.token(for: rider))

        try await app.test { client in
            try await LiveListener.listening(to: [driver, rider, stranger], in: app.broker) { listener in
                let driverProfile: [String: Any] = ["car": "Red Skoda", "seats": 3]
                try await LiveRoute.expect(
                    .ok, client.call(.put, "/v1/rides/driver", token: driverToken, body: driverProfile))
                try await LiveRoute.send(
                    LiveRoute.route[0], to: "/v1/rides/driver/location", token: driverToken, client)
                let (_, ride) = try await client.call(
                    .post, "/v1/rides", token: riderToken,
                    body: ["pickup": ["placeId": MatchingTestApp.porthania.placeId.uuidString]])
                let rideId = try #require((ride["id"] as? String).flatMap(UUID.init(uuidString:)))
                try await LiveRoute.expect(.ok, client.call(.post, "/v1/rides/\(rideId)/accept", token: driverToken))

                let sending = try await LiveRoute.sendRoute(to: "/v1/rides/driver/location", token: driverToken, client)
                let last = LiveRoute.route[9]
                // NB: a bound on a hang, not a speed: the frames go through a paced timer and the broker.
                try await eventually("the last position at the rider", timeout: 60) {
                    listener.frames(to: rider).last?.data.lat == last.lat
                }
                let (_, underway) = try await client.call(.get, "/v1/rides/\(rideId)", token: riderToken)

                let frames = listener.frames(to: rider)
                LiveRoute.expectPaced(frames, sentOver: sending)
                #expect(frames.allSatisfy { $0.data.rideId == rideId && $0.data.matchId == nil })
                #expect(listener.frames(to: stranger).isEmpty && listener.frames(to: driver).isEmpty)
                let position = (underway["driver"] as? [String: Any])?["position"] as? [String: Any]
                #expect(position?["lat"] as? Double == last.lat)

                let code = try #require(underway["code"] as? String)
                let steps: [(String, [String: Any]?)] = [
                    ("arrived", nil), ("started", ["code": code]), ("completed", nil),
                ]
                for (step, body) in steps {
                    try await LiveRoute.expect(
                        .ok, client.call(.post, "/v1/rides/\(rideId)/\(step)", token: driverToken, body: body))
                }
                let heardBefore = listener.frames(to: rider).count
                for point in LiveRoute.route.prefix(3) {
                    try await LiveRoute.send(point, to: "/v1/rides/driver/location", token: driverToken, client)
                }
                try await listener.settle(app, hearing: rider)
                let (_, completed) = try await client.call(.get, "/v1/rides/\(rideId)", token: riderToken)

                #expect(listener.frames(to: rider).count == heardBefore)
                #expect(completed["status"] as? String == "completed")
                #expect((completed["driver"] as? [String: Any])?["position"] == nil)
            }
        }
    }
}
