import Foundation
import Hummingbird
import HummingbirdTesting
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import PlaceCatalog
@testable import Places

@Suite struct RouteTests {
    /// Vuorikatu between Kaisaniemenkatu and Vilhonkatu (way 22565684) is one-way from north to south.
    static let vuorikatuNorth = "60.1729772,24.9473444"
    static let vuorikatuSouth = "60.1723981,24.9474158"

    @Test func aWalkBetweenTwoBuildingsFollowsTheStreetsAndIsNoLongerThanThreeTimesTheStraightLine() async throws {
        let app = try await PlacesTestApp.withBundledStreets()
        let token = try await app.token()
        let porthania = try await app.location(of: "Porthania")
        let metsatalo = try await app.location(of: "Metsätalo")
        let straight: Double = try #require(
            try await app.database.pool.query(
                """
                SELECT ST_Distance(ST_SetSRID(ST_MakePoint(\(porthania.longitude), \(porthania.latitude)), 4326)::geography,
                    ST_SetSRID(ST_MakePoint(\(metsatalo.longitude), \(metsatalo.latitude)), 4326)::geography) AS d
                """
            ).first?.decode("d"))

        try await app.test { client in
            let route = try await client.route(
                from: "\(porthania.latitude),\(porthania.longitude)",
                to: "\(metsatalo.latitude),\(metsatalo.longitude)",
                mode: "walk", token: token)

            #expect(route.meters >= straight)
            #expect(route.meters <= 3 * straight)
            #expect(abs(route.seconds - route.meters / RouteMode.walkingSpeed) < 1)
            #expect(route.path.coordinates.count > 3)
            #expect(route.path.coordinates.first == [porthania.longitude, porthania.latitude])
            #expect(route.path.coordinates.last == [metsatalo.longitude, metsatalo.latitude])
        }
    }

    @Test func aDriveAgainstAOneWayStreetGoesAroundTheBlock() async throws {
        let app = try await PlacesTestApp.withBundledStreets()
        let token = try await app.token()
        let vuorikatu = try await app.database.pool.query(
            """
            SELECT bool_and(drive_seconds > 0) AS forward, bool_or(drive_reverse_seconds > 0) AS backward,
                bool_and(is_walkable) AS walkable, min(name) AS name
            FROM route_edges WHERE source_key = 'way/22565684'
            """
        ).first

        try await app.test { client in
            let along = try await client.route(
                from: Self.vuorikatuNorth, to: Self.vuorikatuSouth, mode: "drive", token: token)
            let against = try await client.route(
                from: Self.vuorikatuSouth, to: Self.vuorikatuNorth, mode: "drive", token: token)
            let walkedAgainst = try await client.route(
                from: Self.vuorikatuSouth, to: Self.vuorikatuNorth, mode: "walk", token: token)

            #expect(try vuorikatu?.decode("name", as: String.self) == "Vuorikatu")
            #expect(try vuorikatu?.decode("forward", as: Bool.self) == true)
            #expect(try vuorikatu?.decode("backward", as: Bool.self) == false)
            #expect(try vuorikatu?.decode("walkable", as: Bool.self) == true)
            #expect(along.meters < 100)
            #expect(against.meters > 3 * along.meters)
            #expect(walkedAgainst.meters < 100)
        }
    }

    @Test(arguments: [
        // Töölönlahti, the bay in the campus's north-west corner: the nearest path is 166 m away.
        ("60.1787,24.9353", "60.1697,24.9484", "from"),
        ("60.1697,24.9484", "60.1787,24.9353", "to"),
    ])
    func aPointFarFromAnyStreetIs404(from: String, to: String, field: String) async throws {
        let app = try await PlacesTestApp.withBundledStreets()
        let token = try await app.token()

        try await app.test { client in
            let (status, problem) = try await client.getJSON(
                "/v1/routes?from=\(from)&to=\(to)&mode=walk", token: token)

            #expect(status == .notFound)
            #expect(problem["type"] as? String == "/problems/no-route")
            #expect(problem["field"] as? String == field)
        }
    }

    @Test func pointsThatNoStreetJoinsAre404() async throws {
        let app = try await PlacesTestApp.withBundledStreets()
        let token = try await app.token()
        // A footway of its own on the campus, joined to nothing: both ends snap to it when it is the main network.
        let island = StreetWay(
            sourceKey: "way/1", tags: ["highway": "footway"], coordinates: [[24.9410, 60.1760], [24.9412, 60.1762]],
            isArea: false)
        let mainland = StreetWay(
            sourceKey: "way/2", tags: ["highway": "footway"],
            coordinates: [[24.9480, 60.1700], [24.9482, 60.1702], [24.9484, 60.1704]], isArea: false)
        let repository = RoutePostgresRepository(database: app.database.pool)
        _ = try await repository.replaceNetwork(StreetNetwork(ways: [island, mainland]), campus: "helsinki.fi")
        try await app.database.pool.query("UPDATE route_vertices SET is_on_walk_network = true")

        try await app.test { client in
            let (status, problem) = try await client.getJSON(
                "/v1/routes?from=60.1761,24.9411&to=60.1702,24.9482&mode=walk", token: token)

            #expect(status == .notFound)
            #expect(problem["type"] as? String == "/problems/no-route")
        }
    }

    @Test(arguments: [
        ("/v1/routes?to=60.17,24.94&mode=walk", "from"), ("/v1/routes?from=60.17,24.94&mode=walk", "to"),
        ("/v1/routes?from=60.17&to=60.17,24.94", "from"), ("/v1/routes?from=abc,def&to=60.17,24.94", "from"),
        ("/v1/routes?from=60.17,24.94&to=95,24.94", "to"), ("/v1/routes?from=60.17,24.94&to=60.17,200", "to"),
        ("/v1/routes?from=60.20,24.94&to=60.17,24.94", "from"), ("/v1/routes?from=60.17,24.94&to=60.17,nan", "to"),
        // Otaniemi, another university's campus: a route between two campuses leaves the caller's.
        ("/v1/routes?from=60.17,24.94&to=60.1867,24.8277", "to"),
        ("/v1/routes?from=60.17,24.94&to=60.17,24.95&mode=fly", "mode"),
        ("/v1/routes?from=60.17,24.94,1&to=60.17,24.95", "from"),
    ])
    func badInputIs400WithTheFieldNamed(path: String, field: String) async throws {
        let app = try await PlacesTestApp.make()
        let token = try await app.token()

        try await app.test { client in
            let (status, problem) = try await client.getJSON(path, token: token)

            #expect(status == .badRequest)
            #expect(problem["field"] as? String == field)
        }
    }

    @Test func aRouteNeedsAToken() async throws {
        let app = try await PlacesTestApp.make()

        try await app.test { client in
            let (status, _) = try await client.getJSON("/v1/routes?from=60.17,24.94&to=60.17,24.95", token: nil)
            #expect(status == .unauthorized)
        }
    }

    @Test func aReimportReplacesTheNetworkAndAnswersTheSame() async throws {
        let app = try await PlacesTestApp.withBundledStreets()
        let token = try await app.token()
        let asked = [
            (Self.vuorikatuSouth, Self.vuorikatuNorth, "drive"), ("60.1701,24.9484", "60.1726,24.9498", "walk"),
            ("60.1660,24.9400", "60.1770,24.9500", "drive"),
        ]
        let edgesBefore = try await app.networkSize()

        try await app.test { client in
            var before: [Route] = []
            for (from, to, mode) in asked {
                before.append(try await client.route(from: from, to: to, mode: mode, token: token))
            }
            // Routes asked while the import replaces the network see the old one or the new one, never a part.
            let done = ImportDone()
            let importing = Task {
                defer { Task { await done.set() } }
                return try await app.importStreets()
            }
            var during: [Route] = []
            while await !done.isSet {
                during.append(try await client.route(from: asked[2].0, to: asked[2].1, mode: "drive", token: token))
            }
            let summary = try await importing.value
            var after: [Route] = []
            for (from, to, mode) in asked {
                after.append(try await client.route(from: from, to: to, mode: mode, token: token))
            }

            #expect(summary.networks["helsinki.fi"]?.edges == edgesBefore)
            #expect(try await app.networkSize() == edgesBefore)
            #expect(before == after)
            #expect(!during.isEmpty && during.allSatisfy { $0 == before[2] })
        }
    }

    @Test func wayTagsDecideWhoMayGoWhichWay() {
        let oneway = StreetAccess.of(["highway": "residential", "oneway": "yes", "maxspeed": "30"])
        let reversed = StreetAccess.of(["highway": "secondary", "oneway": "-1"])
        let roundabout = StreetAccess.of(["highway": "tertiary", "junction": "roundabout"])
        let footway = StreetAccess.of(["highway": "footway"])
        let noCars = StreetAccess.of(["highway": "service", "motor_vehicle": "no"])
        let noFeet = StreetAccess.of(["highway": "primary", "foot": "no"])

        #expect(oneway == .init(isWalkable: true, drivesForward: true, drivesBackward: false, kilometersPerHour: 30))
        #expect(reversed?.drivesForward == false && reversed?.drivesBackward == true)
        #expect(roundabout?.drivesForward == true && roundabout?.drivesBackward == false)
        #expect(footway?.isWalkable == true && footway?.isDrivable == false)
        #expect(noCars?.isWalkable == true && noCars?.isDrivable == false)
        #expect(noFeet?.isWalkable == false && noFeet?.isDrivable == true)
        #expect(StreetAccess.of(["highway": "construction"]) == nil)
        #expect(StreetAccess.of(["highway": "footway", "access": "private"]) == nil)
    }

    @Test func waysAreCutAtEveryPointTheyShare() {
        let crossing = StreetWay(
            sourceKey: "way/1", tags: ["highway": "residential"], coordinates: [[0, 0], [1, 0], [2, 0]], isArea: false)
        let through = StreetWay(
            sourceKey: "way/2", tags: ["highway": "footway"], coordinates: [[1, -1], [1, 0], [1, 1]], isArea: false)
        let bridge = StreetWay(
            sourceKey: "way/3", tags: ["highway": "footway"], coordinates: [[0.5, -1], [0.5, 1]], isArea: false)

        let network = StreetNetwork(ways: [crossing, through, bridge])

        #expect(network.edges.count == 5)
        #expect(network.vertices.count == 7)
        #expect(network.edges.filter { $0.sourceKey == "way/3" }.count == 1)
    }
}

extension PlacesTestApp {
    static let bundledStreets = TestService.repositoryRoot.appendingPathComponent("data/helsinki-centre.osm.pbf")

    /// An app whose database holds the bundled places and street network.
    static func withBundledStreets() async throws -> PlacesTestApp {
        let app = try await make()
        try await app.importFile(bundledData)
        try await app.importStreets()
        return app
    }

    /// Imports the streets of `extract` (the bundled ones unless told) the way `places import --streets` does, with
    /// `--campus` when `campus` is given.
    @discardableResult
    func importStreets(_ extract: URL = bundledStreets, campus: String? = nil) async throws -> StreetImporter.Summary {
        try await StreetImporter(
            repository: RoutePostgresRepository(database: service.database.pool), campuses: importer.campuses
        ).importStreets(extract, campus: try campus.map(self.campus))
    }

    /// Where the building `name` of `campus` is.
    func location(of name: String, campus: String = "helsinki.fi") async throws -> Coordinate {
        let row = try #require(
            try await service.database.pool.query(
                """
                SELECT ST_Y(location::geometry) AS lat, ST_X(location::geometry) AS lon FROM places
                WHERE name = \(name) AND kind = 'building' AND campus = \(campus)
                """
            ).first)
        return Coordinate(latitude: try row.decode("lat"), longitude: try row.decode("lon"))
    }

    /// How many edges the network has, of every campus or of `campus`.
    func networkSize(campus: String? = nil) async throws -> Int {
        try await service.database.pool.query(
            "SELECT count(*)::int AS n FROM route_edges WHERE \(campus)::text IS NULL OR campus = \(campus)"
        ).first!.decode("n")
    }
}

private actor ImportDone {
    var isSet = false
    func set() { isSet = true }
}

extension TestClientProtocol {
    /// The route answered for `from` to `to`; anything but 200 fails.
    func route(from: String, to: String, mode: String, token: String) async throws -> Route {
        try await execute(
            uri: "/v1/routes?from=\(from)&to=\(to)&mode=\(mode)", method: .get,
            headers: [.authorization: "Bearer \(token)"]
        ) { response in
            guard response.status == .ok else {
                throw TestFailure(
                    "route \(from) → \(to) by \(mode): \(response.status) \(String(buffer: response.body))")
            }
            return try JSONDecoder().decode(Route.self, from: Data(response.body.readableBytesView))
        }
    }
}
