import Contracts
import Foundation
import HummingbirdTesting
import MatchingTestSupport
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import MatchingCore
@testable import Rides

@Suite struct RideRulesTests {
    @Test func aCarIsOneLineOfOneToEightyCharactersAndSeatsAreOneToEight() throws {
        #expect(try RideRules.car("  Blue Toyota Yaris, ABC-123 ") == "Blue Toyota Yaris, ABC-123")
        #expect(try RideRules.seats(1) == 1 && RideRules.seats(8) == 8)
        for bad in ["", "   ", String(repeating: "x", count: 81), "two\nlines"] {
            #expect(throws: MatchingError.self) { try RideRules.car(bad) }
        }
        for bad in [0, 9, -1] {
            #expect(throws: MatchingError.self) { try RideRules.seats(bad) }
        }
    }

    @Test func aPointIsInRangeAndAProblemNamesItsField() throws {
        #expect(try GeoPoint.validated(lat: -90, lon: 180, field: nil) == GeoPoint(lat: -90, lon: 180))

        let cases: [(Double, Double, String?, String)] = [
            (90.1, 0, nil, "lat"), (0, -180.5, nil, "lon"), (.nan, 0, "pickup", "pickup.lat"),
            (0, .infinity, "dropoff", "dropoff.lon"),
        ]
        for (lat, lon, field, named) in cases {
            #expect(named == problemField { _ = try GeoPoint.validated(lat: lat, lon: lon, field: field) })
        }
    }

    @Test func aSpotIsAPointOrAPlaceNeverBothOrNeither() throws {
        let placeId = UUID()

        #expect(try PlaceChoice.validated(lat: nil, lon: nil, placeId: placeId, field: "pickup") == .place(placeId))
        #expect(
            try PlaceChoice.validated(lat: 60.17, lon: 24.95, placeId: nil, field: "pickup")
                == .point(GeoPoint(lat: 60.17, lon: 24.95)))
        #expect(
            problemField { _ = try PlaceChoice.validated(lat: 60.17, lon: 24.95, placeId: placeId, field: "dropoff") }
                == "dropoff")
        #expect(
            problemField { _ = try PlaceChoice.validated(lat: nil, lon: 24.95, placeId: nil, field: "pickup") }
                == "pickup")
    }

    @Test func eachRoundOfOffersReachesFartherAndMoreDriversUntilTheLast() {
        var settings = RideSettings()
        settings.offerCount = 3
        settings.offerRadiusMeters = 1000
        settings.offerRounds = 3

        let rounds = (1...4).map { RideRules.offerRound($0, settings: settings) }

        #expect(rounds[0] == OfferRound(number: 1, radiusMeters: 1000, count: 3))
        #expect(rounds[1] == OfferRound(number: 2, radiusMeters: 2000, count: 6))
        #expect(rounds[2] == OfferRound(number: 3, radiusMeters: 4000, count: 9))
        #expect(rounds[3] == nil && RideRules.offerRound(0, settings: settings) == nil)
    }

    @Test func aDriverMarksArrivedStartedAndCompletedInThatOrderOnly() throws {
        #expect(try RideRules.status(after: .arrived, from: .accepted) == .arrived)
        #expect(try RideRules.status(after: .started, from: .arrived) == .started)
        #expect(try RideRules.status(after: .completed, from: .started) == .completed)
        for (step, status) in [
            (RideStep.started, RideStatus.accepted), (.completed, .arrived), (.arrived, .open),
            (.arrived, .arrived), (.completed, .cancelled),
        ] {
            #expect(throws: MatchingError.self) { try RideRules.status(after: step, from: status) }
        }
        #expect(RideStatus.accepted.isUnderway && !RideStatus.completed.isUnderway && !RideStatus.open.isUnderway)
        #expect(RideStatus.arrived.isCancellable && !RideStatus.started.isCancellable)
    }

    @Test func queryParametersAndTheNoteAreCheckedOneByOne() throws {
        #expect(try RideRules.near(lat: "60.17", lon: "24.95") == GeoPoint(lat: 60.17, lon: 24.95))
        #expect(try RideRules.note("  by the door \n") == "by the door" && RideRules.note("  ") == nil)
        #expect(problemField { _ = try RideRules.near(lat: nil, lon: "24.95") } == "lat")
        #expect(problemField { _ = try RideRules.near(lat: "60", lon: "east") } == "lon")
        #expect(problemField { _ = try RideRules.note(String(repeating: "n", count: 501)) } == "note")
    }

    @Test func theChatSubjectNamesThePlacesGivenAsPlaces() {
        #expect(RideRules.subject(pickup: "Porthania", dropoff: "Metsätalo") == "Ride from Porthania to Metsätalo")
        #expect(RideRules.subject(pickup: "Porthania", dropoff: nil) == "Ride from Porthania")
        #expect(RideRules.subject(pickup: nil, dropoff: "Metsätalo") == "Ride to Metsätalo")
        #expect(RideRules.subject(pickup: nil, dropoff: nil) == "Ride")
    }

    /// The field the problem `body` throws names.
    func problemField(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return (error as? MatchingError)?.problem.field
        }
    }
}

/// The rides flow on real PostgreSQL (with PostGIS) and RabbitMQ, through the matching application's routes.
@Suite struct RidesTests {
    /// Porthania, where the riders are picked up.
    static let porthania = GeoPoint(
        lat: MatchingTestApp.porthania.latitude, lon: MatchingTestApp.porthania.longitude)

    /// The middle of Aalto University's campus at Otaniemi, about 6.5 km west of Helsinki's.
    static let otaniemi = GeoPoint(lat: 60.186, lon: 24.828)

    /// The point `meters` north of `point`.
    static func north(of point: GeoPoint = porthania, meters: Double) -> GeoPoint {
        GeoPoint(lat: point.lat + meters / 111_320, lon: point.lon)
    }

    /// A driver profile for `token`, online at `point` when given.
    func addDriver(
        _ client: any TestClientProtocol, _ token: String, car: String = "Blue Toyota Yaris", at point: GeoPoint?
    ) async throws {
        let (saved, answer) = try await client.call(
            .put, "/v1/rides/driver", token: token, body: ["car": car, "seats": 3])
        guard saved == .ok else { throw TestFailure("saving a driver answered \(saved): \(answer)") }
        if let point {
            let (online, body) = try await client.call(
                .put, "/v1/rides/driver/location", token: token, body: ["lat": point.lat, "lon": point.lon])
            guard online == .ok else { throw TestFailure("going online answered \(online): \(body)") }
        }
    }

    /// Asks for a ride from `pickup` as the token's rider; returns the ride's id.
    func requestRide(
        _ client: any TestClientProtocol, _ token: String, pickup: [String: Any] = placeOf(MatchingTestApp.porthania),
        dropoff: [String: Any]? = nil
    ) async throws -> UUID {
        var body: [String: Any] = ["pickup": pickup]
        if let dropoff { body["dropoff"] = dropoff }
        let (status, answer) = try await client.call(.post, "/v1/rides", token: token, body: body)
        guard status == .created, let id = (answer["id"] as? String).flatMap(UUID.init(uuidString:)) else {
            throw TestFailure("asking for a ride answered \(status): \(answer)")
        }
        return id
    }

    static func placeOf(_ place: PlaceSnapshot) -> [String: Any] {
        ["placeId": place.placeId.uuidString]
    }

    static func pointOf(_ point: GeoPoint) -> [String: Any] {
        ["lat": point.lat, "lon": point.lon]
    }

    /// The drivers a ride was offered to, in the order of their rounds.
    func offers(_ app: MatchingTestApp, ride: UUID) async throws -> [(driver: UUID, round: Int)] {
        try await app.database.pool.query(
            "SELECT driver_id, round FROM ride_offers WHERE ride_id = \(ride) ORDER BY round, offered_at"
        ).map { (try $0.decode("driver_id"), try $0.decode("round")) }
    }

    func recipients(_ payload: [String: Any]) -> [UUID] {
        (payload["recipients"] as? [String] ?? []).compactMap(UUID.init(uuidString:))
    }

    func tokens(_ app: MatchingTestApp, _ callers: [Identity]) async throws -> [String] {
        var tokens: [String] = []
        for caller in callers { tokens.append(try await app.token(for: caller)) }
        return tokens
    }

    @Test func aRequestIsOfferedToTheNearestFirstAndFartherOnlyWhenNobodyAnswers() async throws {
        let app = try await MatchingTestApp.make([
            "RIDES_OFFER_COUNT": "1", "RIDES_OFFER_RADIUS_METERS": "1000", "RIDES_OFFER_WINDOW_SECONDS": "1",
        ])
        let (near, middle, far) = (Identity.student("Nea"), Identity.student("Mikko"), Identity.student("Kaisa"))
        let (stale, offline, rider) = (Identity.student("Sami"), Identity.student("Outi"), Identity.student("Riikka"))
        let drivers = [near, middle, far, stale, offline]
        let tokens = try await tokens(app, drivers + [rider])

        try await app.test { client in
            // NB: Kaisa, 2.5 km north, is 1.5 km off the campus's box: within its margin, so still offered rides.
            for (token, meters) in zip(tokens, [200.0, 900, 2500, 100, 150]) {
                try await addDriver(client, token, at: Self.north(meters: meters))
            }
            // Sami's last position is older than the minute; Outi went offline.
            try await app.database.pool.query(
                """
                UPDATE ride_driver_positions SET reported_at = now() - interval '61 seconds'
                WHERE driver_id = \(stale.userId)
                """)
            let (wentOffline, _) = try await client.call(.delete, "/v1/rides/driver/location", token: tokens[4])
            let (_, staleProfile) = try await client.call(.get, "/v1/rides/driver", token: tokens[3])

            let rideId = try await requestRide(client, tokens[5])
            let first = try await offers(app, ride: rideId)
            try await eventually("the ride offered to the far driver") {
                try await offers(app, ride: rideId).contains { $0.driver == far.userId }
            }
            let all = try await offers(app, ride: rideId)
            let waited: Bool = try await app.database.pool.query(
                """
                SELECT bool_and(o.offered_at >= r.created_at + interval '1 second') AS waited
                FROM ride_offers o JOIN rides r ON r.id = o.ride_id
                WHERE o.ride_id = \(rideId) AND o.round > 1
                """
            ).first!.decode("waited")

            #expect(wentOffline == .ok && staleProfile["isOnline"] as? Bool == false)
            // NB: on a loaded machine the second round may already have come: the first offer is what counts.
            #expect(first.first?.driver == near.userId)
            #expect(all.map(\.driver) == [near.userId, middle.userId, far.userId])
            #expect(all.map(\.round) == [1, 2, 3])
            #expect(waited)
        }
        let offered = try await app.events().filter { $0.type == RideOffered.type }

        #expect(offered.prefix(3).map { recipients($0.payload) } == [[near.userId], [middle.userId], [far.userId]])
        let distances = offered.prefix(3).compactMap { $0.payload["distanceMeters"] as? Double }
        #expect(distances.count == 3 && distances == distances.sorted())
        #expect(abs(distances[0] - 200) < 5)
        #expect(
            !offered.contains {
                recipients($0.payload).contains(stale.userId) || recipients($0.payload).contains(offline.userId)
            })
    }

    @Test func theListNearADriverIsNearestFirstWithTheDistancesPostGISGives() async throws {
        let app = try await MatchingTestApp.make()
        let driver = Identity.student("Kalle")
        let riders = (0..<4).map { Identity.student("Rider \($0)") }
        let elsewhere = Identity.student("Otto", campus: "aalto.fi")
        let tokens = try await tokens(app, [driver, elsewhere] + riders)
        let here = Self.north(meters: -1500)

        try await app.test { client in
            let (noProfile, _) = try await client.call(
                .get, "/v1/rides/requests?lat=\(here.lat)&lon=\(here.lon)", token: tokens[0])
            try await addDriver(client, tokens[0], at: here)
            var ids: [UUID] = []
            // The pickups lie on the campus, 1.7 to 2.4 km from Kalle, who waits 0.8 km south of it (within its margin).
            for (token, meters) in zip(tokens[2...], [600.0, 200, 400, 900]) {
                ids.append(try await requestRide(client, token, pickup: Self.pointOf(Self.north(meters: meters))))
            }
            _ = try await requestRide(client, tokens[1], pickup: Self.pointOf(Self.otaniemi))

            let (listed, list) = try await client.call(
                .get, "/v1/rides/requests?lat=\(here.lat)&lon=\(here.lon)&radius=2300", token: tokens[0])
            let (_, narrow) = try await client.call(
                .get, "/v1/rides/requests?lat=\(here.lat)&lon=\(here.lon)&radius=1800", token: tokens[0])
            let requests = list["requests"] as? [[String: Any]] ?? []
            let listedIds = requests.compactMap { ($0["id"] as? String).flatMap(UUID.init(uuidString:)) }
            let expected: [UUID: Double] = Dictionary(
                uniqueKeysWithValues: try await app.database.pool.query(
                    """
                    SELECT id, ST_Distance(pickup, ST_SetSRID(ST_MakePoint(\(here.lon)::double precision,
                        \(here.lat)::double precision), 4326)::geography) AS distance
                    FROM rides
                    """
                ).map { (try $0.decode("id", as: UUID.self), try $0.decode("distance", as: Double.self)) })

            #expect(noProfile == .conflict)
            #expect(listed == .ok)
            #expect(listedIds == [ids[1], ids[2], ids[0]])
            for request in requests {
                let id = try #require((request["id"] as? String).flatMap(UUID.init(uuidString:)))
                let distance = try #require(request["distanceMeters"] as? Double)
                #expect(abs(distance - expected[id]!) < 0.001)
            }
            #expect((narrow["requests"] as? [[String: Any]])?.count == 1)
            #expect(requests.first?["riderName"] as? String == "Rider 1")
        }
    }

    @Test func twentyConcurrentAcceptsLeaveExactlyOneDriver() async throws {
        let app = try await MatchingTestApp.make()
        let steps = try app.steps
        let rider = Identity.student("Riikka")
        let drivers = (0..<20).map { Identity.student("Driver \($0)") }
        for driver in drivers {
            _ = try await steps.saveDriver(car: "Car of \(driver.name)", seats: 4, caller: driver)
        }
        let ride = try await steps.requestRide(
            id: nil, RideDraft(pickup: .place(MatchingTestApp.porthania.placeId), dropoff: nil, note: nil),
            caller: rider)

        let outcomes = await race(drivers, won: "accepted") { driver in
            _ = try await steps.accept(ride.id, caller: driver)
        }
        let accepted = try #require(try await steps.ride(ride.id, caller: rider))
        let events = try await app.events()

        #expect(outcomes.filter { $0 == "accepted" }.count == 1)
        #expect(outcomes.filter { $0 == "conflict" }.count == 19)
        #expect(accepted.status == .accepted)
        let acceptedEvents = events.filter { $0.type == RideAccepted.type }
        #expect(acceptedEvents.count == 1 && acceptedEvents.first.map { recipients($0.payload) } == [rider.userId])
        let driver = acceptedEvents.first?.payload["driver"] as? [String: Any]
        #expect(driver?["id"] as? String == accepted.driver?.id.uuidString)
        #expect(driver?["car"] as? String == "Car of \(accepted.driver?.name ?? "")")
        let opened = events.filter { $0.type == MatchOpened.type }
        #expect(opened.count == 1 && opened.first?.payload["flow"] as? String == "rides")
        #expect(opened.first?.payload["subject"] as? String == "Ride from Porthania")
        let roles = (opened.first?.payload["members"] as? [[String: Any]])?.compactMap { $0["role"] as? String }
        #expect(roles == ["rider", "driver"])
    }

    @Test func aDriverCannotHoldTwoRidesEvenAcceptingBothAtOnce() async throws {
        let app = try await MatchingTestApp.make()
        let steps = try app.steps
        let driver = Identity.student("Kalle")
        let riders = (0..<3).map { Identity.student("Rider \($0)") }
        _ = try await steps.saveDriver(car: "Red Skoda", seats: 4, caller: driver)
        var rides: [UUID] = []
        for rider in riders {
            rides.append(
                try await steps.requestRide(
                    id: nil, RideDraft(pickup: .point(Self.north(meters: 100)), dropoff: nil, note: nil), caller: rider
                ).id)
        }
        let token = try await app.token(for: driver)
        let (bothAtOnce, third) = (Array(rides.prefix(2)), rides[2])

        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for ride in bothAtOnce {
                group.addTask { (try? await steps.accept(ride, caller: driver)) != nil }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        try await app.test { client in
            let (thirdAccept, problem) = try await client.call(.post, "/v1/rides/\(third)/accept", token: token)

            #expect(thirdAccept == .conflict && (problem["detail"] as? String)?.contains("under way") == true)
        }
        let underway: Int = try await app.database.pool.query(
            "SELECT count(*)::int AS n FROM rides WHERE driver_id = \(driver.userId) AND status = 'accepted'"
        ).first!.decode("n")

        #expect(outcomes.filter { $0 }.count == 1)
        #expect(underway == 1)
    }

    @Test func aRidersCancelTellsTheDriverAndClosesTheChat() async throws {
        let app = try await MatchingTestApp.make()
        let (rider, driver, stranger) = (
            Identity.student("Riikka"), Identity.student("Kalle"), Identity.student("Ville")
        )
        let tokens = try await tokens(app, [rider, driver, stranger])

        try await app.test { client in
            try await addDriver(client, tokens[1], car: "Red Skoda Octavia", at: Self.north(meters: 300))
            let rideId = try await requestRide(
                client, tokens[0], dropoff: Self.placeOf(MatchingTestApp.metsatalo))
            let (accepted, ride) = try await client.call(.post, "/v1/rides/\(rideId)/accept", token: tokens[1])
            let (_, seen) = try await client.call(.get, "/v1/rides/\(rideId)", token: tokens[0])
            let (peek, _) = try await client.call(.get, "/v1/rides/\(rideId)", token: tokens[2])
            let (strangerCancels, _) = try await client.call(.post, "/v1/rides/\(rideId)/cancel", token: tokens[2])
            let (cancelled, answer) = try await client.call(.post, "/v1/rides/\(rideId)/cancel", token: tokens[0])
            let (_, driversView) = try await client.call(.get, "/v1/rides/\(rideId)", token: tokens[1])
            let (again, _) = try await client.call(.post, "/v1/rides/\(rideId)/cancel", token: tokens[0])
            let (askedAgain, _) = try await client.call(
                .post, "/v1/rides", token: tokens[0], body: ["pickup": Self.placeOf(MatchingTestApp.porthania)])

            #expect(accepted == .ok && ride["status"] as? String == "accepted")
            let seenDriver = seen["driver"] as? [String: Any]
            #expect(seenDriver?["name"] as? String == "Kalle" && seenDriver?["car"] as? String == "Red Skoda Octavia")
            #expect((seenDriver?["position"] as? [String: Any])?["lat"] as? Double == Self.north(meters: 300).lat)
            #expect(peek == .notFound && strangerCancels == .notFound)
            #expect(cancelled == .ok && answer["status"] as? String == "cancelled")
            #expect(driversView["status"] as? String == "cancelled" && driversView["driver"] != nil)
            #expect((driversView["driver"] as? [String: Any])?["position"] == nil)
            #expect(again == .conflict && askedAgain == .created)
        }
        let events = try await app.events()

        let cancelledEvents = events.filter { $0.type == RideCancelled.type }
        #expect(cancelledEvents.count == 1 && cancelledEvents.first.map { recipients($0.payload) } == [driver.userId])
        #expect(cancelledEvents.first?.payload["cancelledBy"] as? String == rider.userId.uuidString)
        let opened = try #require(events.first { $0.type == MatchOpened.type })
        #expect(opened.payload["subject"] as? String == "Ride from Porthania to Metsätalo")
        let closed = events.filter { $0.type == MatchClosed.type }
        #expect(closed.count == 1 && closed.first?.payload["reason"] as? String == "cancelled")
        #expect(closed.first?.payload["matchId"] as? String == opened.payload["matchId"] as? String)
    }

    @Test func aDriversCancelReopensTheRequestAndOffersItToOthers() async throws {
        let app = try await MatchingTestApp.make(["RIDES_OFFER_COUNT": "1"])
        let (rider, first, second) = (Identity.student("Riikka"), Identity.student("Kalle"), Identity.student("Eino"))
        let tokens = try await tokens(app, [rider, first, second])

        try await app.test { client in
            try await addDriver(client, tokens[1], at: Self.north(meters: 200))
            try await addDriver(client, tokens[2], at: Self.north(meters: 400))
            let rideId = try await requestRide(client, tokens[0])
            let offeredFirst = try await offers(app, ride: rideId)
            let (accepted, _) = try await client.call(.post, "/v1/rides/\(rideId)/accept", token: tokens[1])
            let (givenUp, ride) = try await client.call(.post, "/v1/rides/\(rideId)/cancel", token: tokens[1])
            let offeredAfter = try await offers(app, ride: rideId)
            let (_, ridersView) = try await client.call(.get, "/v1/rides/\(rideId)", token: tokens[0])
            let (formerDriver, _) = try await client.call(.get, "/v1/rides/\(rideId)", token: tokens[1])
            let (acceptedBySecond, _) = try await client.call(.post, "/v1/rides/\(rideId)/accept", token: tokens[2])

            #expect(offeredFirst.map(\.driver) == [first.userId])
            #expect(accepted == .ok && givenUp == .ok && ride["status"] as? String == "open")
            #expect(ride["driver"] == nil && ridersView["status"] as? String == "open")
            #expect(offeredAfter.filter { $0.round > 0 }.map(\.driver) == [second.userId])
            #expect(formerDriver == .notFound && acceptedBySecond == .ok)
        }
        let events = try await app.events()

        let reopened = events.filter { $0.type == RideReopened.type }
        #expect(reopened.count == 1 && reopened.first.map { recipients($0.payload) } == [rider.userId])
        #expect(events.filter { $0.type == RideAccepted.type }.count == 2)
        let opened = events.filter { $0.type == MatchOpened.type }.compactMap { $0.payload["matchId"] as? String }
        let closed = events.filter { $0.type == MatchClosed.type }.compactMap { $0.payload["matchId"] as? String }
        #expect(opened.count == 2 && Set(opened).count == 2 && closed == [opened[0]])
        #expect(
            events.filter { $0.type == RideOffered.type }.map { recipients($0.payload) } == [
                [first.userId], [second.userId],
            ])
    }

    @Test func theDriverMarksArrivedStartedCompletedInOrderAndThePositionEndsWithTheRide() async throws {
        let app = try await MatchingTestApp.make()
        let (rider, driver) = (Identity.student("Riikka"), Identity.student("Kalle"))
        let tokens = try await tokens(app, [rider, driver])

        try await app.test { client in
            try await addDriver(client, tokens[1], at: Self.north(meters: 500))
            let rideId = try await requestRide(client, tokens[0])
            _ = try await client.call(.post, "/v1/rides/\(rideId)/accept", token: tokens[1])
            let code = try await riderCode(client, rideId, riderToken: tokens[0])
            let (tooEarly, _) = try await client.call(
                .post, "/v1/rides/\(rideId)/started", token: tokens[1], body: ["code": code])
            let (byRider, _) = try await client.call(.post, "/v1/rides/\(rideId)/arrived", token: tokens[0])
            let (arrived, _) = try await client.call(.post, "/v1/rides/\(rideId)/arrived", token: tokens[1])
            let (twice, _) = try await client.call(.post, "/v1/rides/\(rideId)/arrived", token: tokens[1])
            let moved = Self.north(meters: 10)
            _ = try await client.call(.put, "/v1/rides/driver/location", token: tokens[1], body: Self.pointOf(moved))
            let (_, underway) = try await client.call(.get, "/v1/rides/\(rideId)", token: tokens[0])
            let (started, _) = try await client.call(
                .post, "/v1/rides/\(rideId)/started", token: tokens[1], body: ["code": code])
            let (cancelStarted, _) = try await client.call(.post, "/v1/rides/\(rideId)/cancel", token: tokens[0])
            let (completed, done) = try await client.call(.post, "/v1/rides/\(rideId)/completed", token: tokens[1])
            let (_, finished) = try await client.call(.get, "/v1/rides/\(rideId)", token: tokens[0])

            #expect(tooEarly == .conflict && byRider == .conflict && twice == .conflict)
            #expect(arrived == .ok && started == .ok && completed == .ok && cancelStarted == .conflict)
            let position = (underway["driver"] as? [String: Any])?["position"] as? [String: Any]
            #expect(position?["lat"] as? Double == moved.lat && position?["lon"] as? Double == moved.lon)
            #expect(done["status"] as? String == "completed" && finished["finishedAt"] != nil)
            #expect(finished["driver"] != nil && (finished["driver"] as? [String: Any])?["position"] == nil)
        }
        let events = try await app.events()

        let steps = events.filter { $0.type.hasPrefix("ride.") && $0.type != RideOffered.type }
        #expect(steps.map(\.type) == ["ride.accepted", "ride.arrived", "ride.started", "ride.completed"])
        #expect(steps.allSatisfy { recipients($0.payload) == [rider.userId] })
        let closed = events.filter { $0.type == MatchClosed.type }
        #expect(closed.count == 1 && closed.first?.payload["reason"] as? String == "completed")
    }

    @Test func eachSideFindsTheirCurrentRideUntilItIsOverAndAStrangerNone() async throws {
        let app = try await MatchingTestApp.make()
        let (rider, driver, stranger) = (
            Identity.student("Riikka"), Identity.student("Kalle"), Identity.student("Sanni")
        )
        let tokens = try await tokens(app, [rider, driver, stranger])

        try await app.test { client in
            try await addDriver(client, tokens[1], at: Self.north(meters: 500))
            let (before, _) = try await client.call(.get, "/v1/rides/current", token: tokens[0])
            let rideId = try await requestRide(client, tokens[0])
            let (_, asked) = try await client.call(.get, "/v1/rides/current", token: tokens[0])
            let (notYet, _) = try await client.call(.get, "/v1/rides/current", token: tokens[1])
            _ = try await client.call(.post, "/v1/rides/\(rideId)/accept", token: tokens[1])
            let (_, riding) = try await client.call(.get, "/v1/rides/current", token: tokens[0])
            let (_, driving) = try await client.call(.get, "/v1/rides/current", token: tokens[1])
            let (strangers, _) = try await client.call(.get, "/v1/rides/current", token: tokens[2])
            try await driveToTheEnd(client, rideId, riderToken: tokens[0], driverToken: tokens[1])
            let (riderAfter, _) = try await client.call(.get, "/v1/rides/current", token: tokens[0])
            let (driverAfter, problem) = try await client.call(.get, "/v1/rides/current", token: tokens[1])

            #expect(before == .notFound && notYet == .notFound && strangers == .notFound)
            #expect(asked["id"] as? String == rideId.uuidString && asked["status"] as? String == "open")
            #expect(riding["id"] as? String == rideId.uuidString && riding["status"] as? String == "accepted")
            #expect(driving["id"] as? String == rideId.uuidString && driving["riderName"] as? String == "Riikka")
            #expect(riderAfter == .notFound && driverAfter == .notFound)
            #expect(problem["status"] as? Int == 404)
        }
    }

    @Test func aRequestNobodyAcceptsExpiresAndTheRiderIsTold() async throws {
        let app = try await MatchingTestApp.make(["RIDES_LIFETIME_SECONDS": "1"])
        let rider = Identity.student("Riikka")
        let token = try await app.token(for: rider)

        try await app.test { client in
            let rideId = try await requestRide(client, token)
            try await eventually("the ride expired") {
                try await client.call(.get, "/v1/rides/\(rideId)", token: token).1["status"] as? String == "expired"
            }
            let (askedAgain, _) = try await client.call(
                .post, "/v1/rides", token: token, body: ["pickup": Self.placeOf(MatchingTestApp.porthania)])

            #expect(askedAgain == .created)
        }
        let expiredEvents = try await app.events().filter { $0.type == RideExpired.type }

        // NB: the second request may expire too before the application stops: each ride is told once.
        let expiredRides = expiredEvents.compactMap { $0.payload["rideId"] as? String }
        #expect(!expiredEvents.isEmpty && Set(expiredRides).count == expiredEvents.count)
        #expect(expiredEvents.allSatisfy { recipients($0.payload) == [rider.userId] })
    }

    @Test func aRetryWithTheSameIdReturnsTheFirstRequest() async throws {
        let app = try await MatchingTestApp.make()
        let (rider, other) = (Identity.student("Riikka"), Identity.student("Ville"))
        let tokens = try await tokens(app, [rider, other])
        let id = UUID().uuidString

        try await app.test { client in
            let body: [String: Any] = [
                "id": id, "pickup": Self.placeOf(MatchingTestApp.porthania), "note": "By the door",
            ]
            let (first, ride) = try await client.call(.post, "/v1/rides", token: tokens[0], body: body)
            let (retry, again) = try await client.call(.post, "/v1/rides", token: tokens[0], body: body)
            let (taken, _) = try await client.call(.post, "/v1/rides", token: tokens[1], body: body)

            #expect(first == .created && retry == .created && taken == .conflict)
            #expect(ride["id"] as? String == again["id"] as? String && again["note"] as? String == "By the door")
        }
        let rides: Int = try await app.database.pool.query("SELECT count(*)::int AS n FROM rides").first!.decode("n")

        #expect(rides == 1)
    }

    @Test func badInputIsAProblemNamingItsFieldAndNothingIsStored() async throws {
        let app = try await MatchingTestApp.make()
        let (rider, driver) = (Identity.student("Riikka"), Identity.student("Kalle"))
        let elsewhere = Identity.student("Otto", campus: "aalto.fi")
        let tokens = try await tokens(app, [rider, driver, elsewhere])

        try await app.test { client in
            let here = Self.pointOf(Self.porthania)
            let driverCases: [([String: Any], String)] = [
                (["car": "", "seats": 3], "car"), (["car": String(repeating: "c", count: 81), "seats": 3], "car"),
                (["car": "Skoda", "seats": 0], "seats"), (["car": "Skoda", "seats": 9], "seats"),
                (["seats": 3], "car"),
            ]
            for (body, field) in driverCases {
                let (status, problem) = try await client.call(.put, "/v1/rides/driver", token: tokens[1], body: body)
                #expect(status == .badRequest && problem["field"] as? String == field, "\(body)")
            }
            let (positionWithoutProfile, _) = try await client.call(
                .put, "/v1/rides/driver/location", token: tokens[1], body: here)
            try await addDriver(client, tokens[1], at: nil)
            for (body, field) in [(["lat": 90.5, "lon": 24.9], "lat"), (["lat": 60.1, "lon": -180.5], "lon")] {
                let (status, problem) = try await client.call(
                    .put, "/v1/rides/driver/location", token: tokens[1], body: body)
                #expect(status == .badRequest && problem["field"] as? String == field, "\(body)")
            }
            let rideCases: [([String: Any], String)] = [
                (["pickup": ["lat": 91, "lon": 24.9]], "pickup.lat"),
                (["pickup": ["lat": 60.1, "lon": 181]], "pickup.lon"),
                (["pickup": ["lat": 60.1]], "pickup"),
                (["pickup": here, "dropoff": ["lat": 60.1, "lon": 24.9, "placeId": UUID().uuidString]], "dropoff"),
                (["pickup": here, "note": String(repeating: "n", count: 501)], "note"),
                (["note": "no pickup"], "pickup"),
            ]
            for (body, field) in rideCases {
                let (status, problem) = try await client.call(.post, "/v1/rides", token: tokens[0], body: body)
                #expect(status == .badRequest && problem["field"] as? String == field, "\(body)")
            }
            let (unknownPlace, unknownProblem) = try await client.call(
                .post, "/v1/rides", token: tokens[0], body: ["pickup": ["placeId": UUID().uuidString]])
            let (otherCampus, otherProblem) = try await client.call(
                .post, "/v1/rides", token: tokens[2], body: ["pickup": Self.placeOf(MatchingTestApp.porthania)])
            let (unknownDropoff, dropoffProblem) = try await client.call(
                .post, "/v1/rides", token: tokens[0], body: ["pickup": here, "dropoff": ["placeId": UUID().uuidString]])
            let rideId = try await requestRide(client, tokens[1])
            let (ownRide, ownProblem) = try await client.call(.post, "/v1/rides/\(rideId)/accept", token: tokens[1])
            let (second, _) = try await client.call(.post, "/v1/rides", token: tokens[1], body: ["pickup": here])
            let (otherCampusAccepts, _) = try await client.call(.post, "/v1/rides/\(rideId)/accept", token: tokens[2])
            let (noProfileAccepts, _) = try await client.call(.post, "/v1/rides/\(rideId)/accept", token: tokens[0])
            var queryStatuses: [Int] = []
            for query in [
                "?lon=24.9", "?lat=60.1", "?lat=95&lon=24.9", "?lat=60.1&lon=24.9&radius=0",
                "?lat=60.1&lon=24.9&limit=0", "?lat=north&lon=24.9",
            ] {
                queryStatuses.append(try await client.call(.get, "/v1/rides/requests\(query)", token: tokens[1]).0.code)
            }
            let (unknownRide, _) = try await client.call(.post, "/v1/rides/\(UUID())/accept", token: tokens[1])
            let (notAnId, _) = try await client.call(.get, "/v1/rides/not-an-id", token: tokens[1])
            let (anonymous, _) = try await client.call(.get, "/v1/rides/driver")

            #expect(positionWithoutProfile == .conflict)
            #expect(unknownPlace == .notFound && (unknownProblem["detail"] as? String)?.contains("pickup") == true)
            #expect(otherCampus == .notFound && (otherProblem["detail"] as? String)?.contains("pickup") == true)
            #expect(unknownDropoff == .notFound && (dropoffProblem["detail"] as? String)?.contains("dropoff") == true)
            #expect(ownRide == .conflict && (ownProblem["detail"] as? String)?.contains("your own") == true)
            #expect(second == .conflict && otherCampusAccepts == .notFound && noProfileAccepts == .conflict)
            #expect(queryStatuses.allSatisfy { $0 == 400 }, "\(queryStatuses)")
            #expect(unknownRide == .notFound && notAnId == .notFound && anonymous == .unauthorized)
        }
        let stored: (rides: Int, positions: Int, car: String) = try await app.database.pool.query(
            """
            SELECT (SELECT count(*)::int FROM rides) AS rides,
                (SELECT count(*)::int FROM ride_driver_positions) AS positions,
                (SELECT car FROM ride_drivers) AS car
            """
        ).first.map { (try $0.decode("rides"), try $0.decode("positions"), try $0.decode("car")) }!

        #expect(stored.rides == 1 && stored.positions == 0 && stored.car == "Blue Toyota Yaris")
    }
}
