import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import Messaging
import Postgres
import ServiceKit
import ServiceLifecycle
import Synchronization
import TestSupport
import Testing

@testable import Delivery
@testable import MatchingCore
@testable import Rides

@Suite struct PositionPacingTests {
    @Test func aPositionGoesAtOnceASecondAfterTheLastFrameAndOtherwiseWaitsForOneTimer() {
        let sent = Date(timeIntervalSince1970: 1_000)

        #expect(PositionPacing.decide(lastSentAt: nil, isPending: false, now: sent) == .sendNow)
        #expect(PositionPacing.decide(lastSentAt: sent, isPending: false, now: sent + 1) == .sendNow)
        #expect(PositionPacing.decide(lastSentAt: sent, isPending: false, now: sent + 0.3) == .sendAt(sent + 1))
        #expect(PositionPacing.decide(lastSentAt: sent, isPending: true, now: sent + 0.6) == .leaveToTimer)
        #expect(PositionPacing.decide(lastSentAt: sent, isPending: true, now: sent + 5) == .leaveToTimer)
    }
}

/// Live location on real PostgreSQL and RabbitMQ: what matching publishes on notifications' live exchange, heard by
/// a queue of the test's own bound to the users' keys as a notifications replica binds its sockets' users.
@Suite struct LiveLocationTests {
    /// Where the driver and the deliverer start, and the ten positions they send on their way to Porthania.
    static let porthania = GeoPoint(lat: MatchingTestApp.porthania.latitude, lon: MatchingTestApp.porthania.longitude)
    static let route = (0..<10).map { GeoPoint(lat: porthania.lat + Double(10 - $0) * 0.0004, lon: porthania.lon) }

    @Test func aRiderSeesTheirDriverAtMostOnceASecondWithTheLastPositionAndNothingAfterTheRide() async throws {
        let app = try await MatchingTestApp.make()
        let (driver, rider, stranger) = (
            Identity.student("Ville"), Identity.student("Riikka"), Identity.student("Sanna")
        )
        let (driverToken, riderToken) = (try await app.token(for: driver), try await app.token(for: rider))

        try await app.test { client in
            try await LiveListener.listening(to: [driver, rider, stranger], in: app.broker) { listener in
                let driverProfile: [String: Any] = ["car": "Red Skoda", "seats": 3]
                try await expect(.ok, client.call(.put, "/v1/rides/driver", token: driverToken, body: driverProfile))
                try await send(Self.route[0], to: "/v1/rides/driver/location", token: driverToken, client)
                let (_, ride) = try await client.call(
                    .post, "/v1/rides", token: riderToken,
                    body: ["pickup": ["placeId": MatchingTestApp.porthania.placeId.uuidString]])
                let rideId = try #require((ride["id"] as? String).flatMap(UUID.init(uuidString:)))
                try await expect(.ok, client.call(.post, "/v1/rides/\(rideId)/accept", token: driverToken))

                try await sendRoute(to: "/v1/rides/driver/location", token: driverToken, client)
                let last = Self.route[9]
                try await eventually("the last position at the rider", timeout: 10) {
                    listener.frames(to: rider).last?.data.lat == last.lat
                }
                let (_, underway) = try await client.call(.get, "/v1/rides/\(rideId)", token: riderToken)

                let frames = listener.frames(to: rider)
                expectPaced(frames)
                #expect(frames.allSatisfy { $0.data.rideId == rideId && $0.data.matchId == nil })
                #expect(listener.frames(to: stranger).isEmpty && listener.frames(to: driver).isEmpty)
                let position = (underway["driver"] as? [String: Any])?["position"] as? [String: Any]
                #expect(position?["lat"] as? Double == last.lat)

                for step in ["arrived", "started", "completed"] {
                    try await expect(.ok, client.call(.post, "/v1/rides/\(rideId)/\(step)", token: driverToken))
                }
                let heardBefore = listener.frames(to: rider).count
                for point in Self.route.prefix(3) {
                    try await send(point, to: "/v1/rides/driver/location", token: driverToken, client)
                }
                try await listener.settle(app, hearing: rider)
                let (_, completed) = try await client.call(.get, "/v1/rides/\(rideId)", token: riderToken)

                #expect(listener.frames(to: rider).count == heardBefore)
                #expect(completed["status"] as? String == "completed")
                #expect((completed["driver"] as? [String: Any])?["position"] == nil)
            }
        }
    }

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

                try await sendRoute(to: path, token: delivererToken, client)
                let last = Self.route[9]
                try await eventually("the last position at the orderer", timeout: 10) {
                    listener.frames(to: orderer).last?.data.lat == last.lat
                }
                let (_, active) = try await client.call(.get, "/v1/matches/\(match.id)", token: ordererToken)

                let frames = listener.frames(to: orderer)
                expectPaced(frames)
                #expect(frames.allSatisfy { $0.data.matchId == match.id && $0.data.rideId == nil })
                #expect(listener.frames(to: stranger).isEmpty && listener.frames(to: deliverer).isEmpty)
                let position = active["delivererPosition"] as? [String: Any]
                #expect(position?["lat"] as? Double == last.lat && position?["lon"] as? Double == last.lon)

                try await expect(.ok, client.call(.post, "/v1/matches/\(match.id)/complete", token: delivererToken))
                try await expect(.ok, client.call(.post, "/v1/matches/\(match.id)/complete", token: ordererToken))
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

    /// Ten positions along the route in two seconds, as a phone on the move sends them.
    func sendRoute(to path: String, token: String, _ client: any TestClientProtocol) async throws {
        for point in Self.route {
            try await send(point, to: path, token: token, client)
            // NB: not a wait for a condition: the pace of the sender, which the frames' pacing is tested against.
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    func send(_ point: GeoPoint, to path: String, token: String, _ client: any TestClientProtocol) async throws {
        try await expect(.ok, client.call(.put, path, token: token, body: ["lat": point.lat, "lon": point.lon]))
    }

    func expect(_ status: HTTPResponse.Status, _ answer: (HTTPResponse.Status, [String: Any])) throws {
        guard answer.0 == status else { throw TestFailure("expected \(status), got \(answer.0): \(answer.1)") }
    }

    /// Location frames without `seq`, at least about a second apart (however long the ten positions took to send),
    /// so fewer than the positions and more than one.
    func expectPaced(_ frames: [LiveListener.Heard]) {
        let gaps = zip(frames.dropFirst(), frames).map { $0.receivedAt.timeIntervalSince($1.receivedAt) }
        #expect(frames.allSatisfy { $0.type == LocationFrame.type && !$0.hasSeq })
        #expect(frames.count >= 2 && frames.count < Self.route.count, "\(frames.count) frames")
        #expect(gaps.allSatisfy { $0 >= 0.9 }, "gaps \(gaps)")
    }
}

/// A queue of the test's own on notifications' live exchange, bound to some users' keys: what their sockets would
/// be sent, with when it arrived.
final class LiveListener: Sendable {
    /// One frame one user was sent.
    struct Heard: Sendable {
        var userId: UUID
        var receivedAt: Date
        var type: String
        var hasSeq: Bool
        var data: LocationFrame.Payload
    }

    let channel: LiveChannel
    private let heard = Mutex<[Heard]>([])
    private let sentinels = Mutex<Set<String>>([])

    private init(channel: LiveChannel) {
        self.channel = channel
    }

    /// Runs `body` while the users' keys are bound in `broker`'s vhost.
    static func listening(
        to users: [Identity], in broker: TestBroker, _ body: @Sendable (LiveListener) async throws -> Void
    ) async throws {
        let channel = LiveChannel(
            exchange: LiveFrames.exchange, amqpURL: broker.url, status: BrokerStatus(), logger: TestEnvironment.logger)
        let listener = LiveListener(channel: channel)
        channel.onReceive { key, body in listener.record(key, body) }
        let group = ServiceGroup(services: [channel], logger: TestEnvironment.logger)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            for user in users { await channel.bind(LiveFrames.routingKey(user.userId)) }
            do {
                try await body(listener)
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    func frames(to user: Identity) -> [Heard] {
        heard.withLock { $0.filter { $0.userId == user.userId } }
    }

    /// Returns once no position timer is left to work and a frame published now has come back to `user`'s key, so
    /// that any frame still on its way would have arrived.
    func settle(_ app: MatchingTestApp, hearing user: Identity) async throws {
        try await eventually("no position timer left to work", timeout: 10) {
            let waiting: Int = try await app.database.pool.query(
                "SELECT count(*) AS waiting FROM timers WHERE kind = 'position' AND done_at IS NULL"
            ).first!.decode("waiting")
            return waiting == 0
        }
        let sentinel = UUID().uuidString
        let body = Data(#"{"sentinel":"\#(sentinel)"}"#.utf8)
        channel.publish(routingKey: LiveFrames.routingKey(user.userId), body: body)
        try await eventually("a frame published now back at the user's key", timeout: 10) {
            sentinels.withLock { $0.contains(sentinel) }
        }
    }

    private func record(_ routingKey: String, _ body: Data) {
        let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
        if let sentinel = object["sentinel"] as? String {
            sentinels.withLock { _ = $0.insert(sentinel) }
            return
        }
        guard routingKey.hasPrefix("user."), let userId = UUID(uuidString: String(routingKey.dropFirst(5))) else {
            return
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            return try Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }
        guard let frame = try? decoder.decode(LocationFrame.self, from: body) else { return }
        heard.withLock {
            $0.append(
                Heard(
                    userId: userId, receivedAt: Date(), type: frame.type, hasSeq: object["seq"] != nil,
                    data: frame.data))
        }
    }
}
