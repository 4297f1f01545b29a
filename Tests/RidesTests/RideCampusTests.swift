import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import MatchingTestSupport
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import Rides

/// Rides on a system of two campuses: every point a student gives lies on their campus (a drop-off within its drop-off
/// radius, a driver within its margin), and a student of one campus neither sees nor changes a ride of the other.
@Suite struct RideCampusTests {
    let rides = RidesTests()
    static let (aalto, helsinki) = ("Aalto University, Otaniemi", "University of Helsinki, City Centre Campus")

    /// The point `kilometers` north of the Helsinki campus's box (its northern edge is at 60.179).
    static func northOfHelsinki(kilometers: Double) -> [String: Any] {
        ["lat": 60.179 + kilometers * 1000 / 111_195, "lon": 24.945]
    }

    /// A point a student gives off their campus, where the rides flow takes one.
    enum OffCampusPoint: String, CaseIterable, Sendable {
        /// Otto of Aalto asks for a ride from Porthania.
        case pickup
        /// Riikka of Helsinki asks for a ride to a point 40 km north of her campus.
        case dropoff
        /// Kalle, a driver of Helsinki, lists the open requests from Otaniemi, 6 km off his campus.
        case driverList
    }

    @Test(arguments: OffCampusPoint.allCases)
    func aPointOffTheCallersCampusIsAProblemNamingTheFieldAndTheCampusAndNothingIsStored(_ point: OffCampusPoint)
        async throws
    {
        let app = try await MatchingTestApp.make()
        let (rider, driver) = (Identity.student("Riikka"), Identity.student("Kalle"))
        let elsewhere = Identity.student("Otto", campus: "aalto.fi")
        let tokens = try await rides.tokens(app, [rider, driver, elsewhere])

        try await app.test { client in
            try await rides.addDriver(client, tokens[1], at: RidesTests.north(meters: 300))
            let porthania = RidesTests.pointOf(RidesTests.porthania)
            let ((status, problem), field, campus): ((HTTPResponse.Status, [String: Any]), String, String)
            switch point {
            case .pickup:
                (status, problem) = try await client.call(
                    .post, "/v1/rides", token: tokens[2], body: ["pickup": porthania])
                (field, campus) = ("pickup", Self.aalto)
            case .dropoff:
                (status, problem) = try await client.call(
                    .post, "/v1/rides", token: tokens[0],
                    body: ["pickup": porthania, "dropoff": Self.northOfHelsinki(kilometers: 40)])
                (field, campus) = ("dropoff", Self.helsinki)
            case .driverList:
                let otaniemi = RidesTests.otaniemi
                (status, problem) = try await client.call(
                    .get, "/v1/rides/requests?lat=\(otaniemi.lat)&lon=\(otaniemi.lon)", token: tokens[1])
                (field, campus) = ("lat", Self.helsinki)
            }

            #expect(status == .badRequest && problem["field"] as? String == field, "\(problem)")
            #expect((problem["detail"] as? String)?.contains(campus) == true, "\(problem)")
        }
        let stored: Int = try await app.database.pool.query("SELECT count(*)::int AS n FROM rides").first!.decode("n")
        #expect(stored == 0)
        #expect(try await app.events().filter { $0.type.hasPrefix("ride.") || $0.type == MatchOpened.type }.isEmpty)
    }

    @Test func aDropoffMayLieOffTheCampusWithinItsDropoffRadius() async throws {
        let app = try await MatchingTestApp.make()
        let (near, far) = (Identity.student("Riikka"), Identity.student("Kaisa"))
        let tokens = try await rides.tokens(app, [near, far])

        try await app.test { client in
            let porthania = RidesTests.pointOf(RidesTests.porthania)
            let (within, ride) = try await client.call(
                .post, "/v1/rides", token: tokens[0],
                body: ["pickup": porthania, "dropoff": Self.northOfHelsinki(kilometers: 25)])
            let (beyond, problem) = try await client.call(
                .post, "/v1/rides", token: tokens[1],
                body: ["pickup": porthania, "dropoff": Self.northOfHelsinki(kilometers: 40)])

            #expect(within == .created && (ride["dropoff"] as? [String: Any])?["lat"] != nil, "\(ride)")
            #expect(beyond == .badRequest && problem["field"] as? String == "dropoff")
            #expect((problem["detail"] as? String)?.hasSuffix("is more than 30 km from \(Self.helsinki).") == true)
        }
    }

    @Test func onlyDriversOnTheCampusOrWithinItsMarginAreOfferedItsRides() async throws {
        let app = try await MatchingTestApp.make(["RIDES_OFFER_COUNT": "5", "RIDES_OFFER_RADIUS_METERS": "10000"])
        // Mari waits 1.5 km north of the campus (within its 2 km margin), Hanna at Otaniemi (6 km off it), and Otto,
        // a driver of Aalto, right at Porthania.
        let (mari, hanna) = (Identity.student("Mari"), Identity.student("Hanna"))
        let otto = Identity.student("Otto", campus: "aalto.fi")
        let riders = [Identity.student("Riikka"), Identity.student("Rasmus")]
        let tokens = try await rides.tokens(app, [mari, hanna, otto] + riders)

        try await app.test { client in
            try await rides.addDriver(client, tokens[0], at: RidesTests.north(meters: 2500))
            try await rides.addDriver(client, tokens[1], at: RidesTests.otaniemi)
            try await rides.addDriver(client, tokens[2], at: RidesTests.porthania)
            let first = try await rides.requestRide(client, tokens[3])
            let firstOffers = try await rides.offers(app, ride: first)

            // Hanna drives in: from her next position near the campus on, she is offered its rides.
            try await rides.addDriver(client, tokens[1], at: RidesTests.north(meters: 300))
            let second = try await rides.requestRide(client, tokens[4])
            let secondOffers = try await rides.offers(app, ride: second)

            #expect(firstOffers.map(\.driver) == [mari.userId])
            #expect(Set(secondOffers.map(\.driver)) == [hanna.userId, mari.userId] && secondOffers.count == 2)
        }
        let offered = try await app.events().filter { $0.type == RideOffered.type }.flatMap {
            rides.recipients($0.payload)
        }
        #expect(offered.filter { $0 == mari.userId }.count == 2 && offered.filter { $0 == hanna.userId }.count == 1)
        #expect(!offered.contains(otto.userId) && offered.count == 3)
    }

    @Test func aStudentOfAnotherCampusNeitherSeesNorChangesARideAndIsNamedByNoEvent() async throws {
        let app = try await MatchingTestApp.make()
        let (rider, driver) = (Identity.student("Riikka"), Identity.student("Kalle"))
        let (otto, ossi) = (Identity.student("Otto", campus: "aalto.fi"), Identity.student("Ossi", campus: "aalto.fi"))
        let tokens = try await rides.tokens(app, [rider, driver, otto, ossi])

        try await app.test { client in
            try await rides.addDriver(client, tokens[1], at: RidesTests.north(meters: 300))
            // Otto drives for Aalto, from a point within Helsinki's campus margin too.
            try await rides.addDriver(client, tokens[2], at: RidesTests.porthania)
            let open = try await rides.requestRide(client, tokens[0])
            let otaniemi = RidesTests.otaniemi
            let (_, list) = try await client.call(
                .get, "/v1/rides/requests?lat=\(otaniemi.lat)&lon=\(otaniemi.lon)&radius=50000", token: tokens[2])
            let (seen, _) = try await client.call(.get, "/v1/rides/\(open)", token: tokens[2])
            let (accepted, _) = try await client.call(.post, "/v1/rides/\(open)/accept", token: tokens[2])
            let (cancelledOpen, _) = try await client.call(.post, "/v1/rides/\(open)/cancel", token: tokens[3])
            let (_, kalleAccepts) = try await client.call(.post, "/v1/rides/\(open)/accept", token: tokens[1])
            var marks: [HTTPResponse.Status] = []
            for step in ["arrived", "started", "completed", "cancel"] {
                marks.append(
                    try await client.call(.post, "/v1/rides/\(open)/\(step)", token: tokens[2], body: ["code": "1234"])
                        .0)
            }
            let (current, _) = try await client.call(.get, "/v1/rides/current", token: tokens[2])
            let (_, after) = try await client.call(.get, "/v1/rides/\(open)", token: tokens[0])

            #expect((list["requests"] as? [Any])?.isEmpty == true)
            #expect(seen == .notFound && accepted == .notFound && cancelledOpen == .notFound)
            #expect(kalleAccepts["status"] as? String == "accepted")
            #expect(marks == [.notFound, .notFound, .notFound, .notFound], "\(marks)")
            #expect(current == .notFound)
            #expect(after["status"] as? String == "accepted")
            #expect((after["driver"] as? [String: Any])?["name"] as? String == "Kalle")
        }
        for event in try await app.events() {
            let text = String(decoding: try JSONSerialization.data(withJSONObject: event.payload), as: UTF8.self)
            for outsider in [otto, ossi] {
                #expect(!text.lowercased().contains(outsider.userId.uuidString.lowercased()), "\(event.type)")
            }
        }
    }
}
