import Foundation
import Hummingbird
import HummingbirdTesting
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import PlaceCatalog
@testable import Places

/// Two campuses on one places service: Helsinki's bundled data, and Otaniemi's fixture (a piece of the same streets
/// and places moved onto Aalto University's campus with new ids, so the same names stand on both).
@Suite struct TwoCampusesTests {
    @Test(arguments: ["aalto.fi", nil])
    func importingOtaniemiAfterHelsinkiKeepsBoth(campus: String?) async throws {
        let app = try await PlacesTestApp.make()

        let helsinki = try await app.importFile(PlacesTestApp.bundledData)
        let otaniemi = try await app.importFile(PlacesTestApp.otaniemiPlaces, campus: campus)

        #expect(otaniemi.broken.isEmpty)
        #expect(otaniemi.added > 80)
        #expect(otaniemi.updated == 0 && otaniemi.unchanged == 0 && otaniemi.retired == 0)
        #expect(try await app.placesByCampus() == ["helsinki.fi": helsinki.added, "aalto.fi": otaniemi.added])
    }

    @Test func reimportingOneCampusNeverRetiresTheOthersPlaces() async throws {
        let app = try await PlacesTestApp.withBothCampuses()
        let before = try await app.placesByCampus()

        let helsinkiAgain = try await app.importFile(PlacesTestApp.bundledData)
        let afterHelsinkiAgain = try await app.placesByCampus()
        let fewerOtaniemi = try await app.importFile(
            try PlacesTestApp.firstLines(10, of: PlacesTestApp.otaniemiPlaces), campus: "aalto.fi", retiresMany: true)
        let afterFewerOtaniemi = try await app.placesByCampus()
        let fewerHelsinki = try await app.importFile(
            PlacesTestApp.fixture("university-osmium.geojsonseq"), campus: "helsinki.fi", retiresMany: true)
        let afterFewerHelsinki = try await app.placesByCampus()

        #expect(helsinkiAgain.retired == 0 && helsinkiAgain.unchanged == before["helsinki.fi"])
        #expect(afterHelsinkiAgain == before)
        #expect(fewerOtaniemi.retired == before["aalto.fi"]! - 10)
        #expect(afterFewerOtaniemi == ["helsinki.fi": before["helsinki.fi"]!, "aalto.fi": 10])
        #expect(fewerHelsinki.retired > 0)
        #expect(afterFewerHelsinki["aalto.fi"] == 10)
        #expect(
            try await app.retiredByCampus() == [
                "aalto.fi": fewerOtaniemi.retired, "helsinki.fi": fewerHelsinki.retired,
            ])
    }

    @Test(arguments: [("helsinki.fi", "aalto.fi"), ("aalto.fi", "helsinki.fi")])
    func aStudentFindsOnlyTheirOwnCampussPlaces(campus: String, otherCampus: String) async throws {
        let app = try await PlacesTestApp.withBothCampuses()
        let token = try await app.token(campus: campus)
        let bounds = try app.campus(campus).bounds
        let own = try await app.location(of: "Porthania", campus: campus)
        let other = try await app.location(of: "Porthania", campus: otherCampus)
        let ownId = try await app.placeId(of: "Porthania", campus: campus)
        let otherId = try await app.placeId(of: "Porthania", campus: otherCampus)

        try await app.test { client in
            let searched = try await client.places("/v1/places?q=porthania", token: token)
            let searchedThere = try await client.places(
                "/v1/places?q=ka&near=\(other.latitude),\(other.longitude)&limit=50", token: token)
            let nearbyHere = try await client.places(
                "/v1/places/nearby?lat=\(own.latitude)&lon=\(own.longitude)&radius=500&limit=50", token: token)
            let nearbyThere = try await client.places(
                "/v1/places/nearby?lat=\(other.latitude)&lon=\(other.longitude)&radius=500&limit=50", token: token)
            let (ownStatus, _) = try await client.getJSON("/v1/places/\(ownId)", token: token)
            let (otherStatus, problem) = try await client.getJSON("/v1/places/\(otherId)", token: token)

            #expect(searched.contains { $0["id"] as? String == ownId.uuidString })
            #expect(!searchedThere.isEmpty && nearbyHere.count > 20)
            for place in searched + searchedThere + nearbyHere {
                let point = Campus.Point(
                    latitude: place["latitude"] as? Double ?? 0, longitude: place["longitude"] as? Double ?? 0)
                #expect(place["campus"] as? String == campus && bounds.contains(point), "\(place)")
            }
            #expect(nearbyThere.isEmpty)
            #expect(ownStatus == .ok)
            #expect(otherStatus == .notFound && problem["name"] == nil)
        }
    }

    @Test func anAaltoStudentWalksAndDrivesAlongOtaniemisStreetsAsAlongTheSameStreetsInHelsinki() async throws {
        let app = try await PlacesTestApp.withBothCampuses()
        let helsinkiStreets = try await app.importStreets()
        let otaniemiStreets = try await app.importStreets(PlacesTestApp.otaniemiStreets, campus: "aalto.fi")
        let aaltoToken = try await app.token(campus: "aalto.fi")
        let helsinkiToken = try await app.token(campus: "helsinki.fi")
        let aalto = try app.campus("aalto.fi").bounds
        let (helsinkiFrom, helsinkiTo) = (
            try await app.location(of: "Porthania"), try await app.location(of: "Kaisa-talo")
        )
        let (from, to) = (Self.movedToOtaniemi(helsinkiFrom), Self.movedToOtaniemi(helsinkiTo))

        try await app.test { client in
            let walk = try await client.route(from: from.text, to: to.text, mode: "walk", token: aaltoToken)
            let drive = try await client.route(from: from.text, to: to.text, mode: "drive", token: aaltoToken)
            let helsinkiWalk = try await client.route(
                from: helsinkiFrom.text, to: helsinkiTo.text, mode: "walk", token: helsinkiToken)

            #expect(Set(helsinkiStreets.networks.keys) == ["helsinki.fi"])
            #expect(Set(otaniemiStreets.networks.keys) == ["aalto.fi"])
            #expect(try await app.networkSize(campus: "helsinki.fi") == helsinkiStreets.networks["helsinki.fi"]?.edges)
            #expect(walk.path.coordinates.count > 3)
            #expect(try #require(walk.path.coordinates.first).isNear(from))
            #expect(try #require(walk.path.coordinates.last).isNear(to))
            #expect(
                (walk.path.coordinates + drive.path.coordinates).allSatisfy {
                    aalto.contains(.init(latitude: $0[1], longitude: $0[0]))
                })
            // The fixture is Helsinki's streets moved, so the same walk moved is as long (a degree of longitude is
            // 0.05 % shorter there).
            #expect(abs(walk.meters - helsinkiWalk.meters) < 0.01 * helsinkiWalk.meters)
            #expect(drive.meters >= walk.meters)
        }
    }

    /// `point` moved as make-otaniemi.py moves the Helsinki extract onto Otaniemi.
    static func movedToOtaniemi(_ point: Coordinate) -> Coordinate {
        Coordinate(latitude: point.latitude + 0.0165, longitude: point.longitude - 0.120)
    }

    // Beside Porthania and Kaisa-talo on each campus; Otaniemi's are Helsinki's moved by the fixture's offset.
    @Test(arguments: [
        // An Aalto student: to Helsinki, from Helsinki, and wholly in Helsinki (where Helsinki's network would route).
        ("aalto.fi", "60.1862,24.8284", "60.1697,24.9484", "to"),
        ("aalto.fi", "60.1697,24.9484", "60.1862,24.8284", "from"),
        ("aalto.fi", "60.1697,24.9484", "60.1701,24.9509", "from"),
        // A Helsinki student: from Otaniemi, and wholly on Otaniemi.
        ("helsinki.fi", "60.1862,24.8284", "60.1697,24.9484", "from"),
        ("helsinki.fi", "60.1862,24.8284", "60.1866,24.8309", "from"),
    ])
    func aRouteWithAPointOnTheOtherCampusIs400(campus: String, from: String, to: String, field: String) async throws {
        let app = try await PlacesTestApp.withBothCampuses()
        try await app.importStreets()
        try await app.importStreets(PlacesTestApp.otaniemiStreets, campus: "aalto.fi")
        let token = try await app.token(campus: campus)

        try await app.test { client in
            let (status, problem) = try await client.getJSON("/v1/routes?from=\(from)&to=\(to)&mode=walk", token: token)

            #expect(status == .badRequest)
            #expect(problem["field"] as? String == field)
            #expect(problem["detail"] as? String == "\(field) is not on your campus.")
        }
    }
}

extension PlacesTestApp {
    /// An app with Helsinki's bundled places and Otaniemi's fixture imported with `--campus aalto.fi`.
    static func withBothCampuses() async throws -> PlacesTestApp {
        let app = try await make()
        try await app.importFile(bundledData)
        try await app.importFile(otaniemiPlaces, campus: "aalto.fi")
        return app
    }

    /// The first `count` lines of a GeoJSON text sequence, as a file of their own.
    static func firstLines(_ count: Int, of url: URL) throws -> URL {
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n").prefix(count)
        let part = FileManager.default.temporaryDirectory.appendingPathComponent("part-\(UUID()).geojsonseq")
        try Data(lines.map { $0 + "\n" }.joined().utf8).write(to: part)
        return part
    }

    /// How many places each campus has in service.
    func placesByCampus() async throws -> [String: Int] {
        try await countByCampus(
            "SELECT campus, count(*)::int AS n FROM places WHERE retired_at IS NULL GROUP BY campus")
    }

    /// How many places of each campus are retired.
    func retiredByCampus() async throws -> [String: Int] {
        try await countByCampus(
            "SELECT campus, count(*)::int AS n FROM places WHERE retired_at IS NOT NULL GROUP BY campus")
    }

    private func countByCampus(_ sql: SQL) async throws -> [String: Int] {
        try await service.database.pool.query(sql).reduce(into: [:]) {
            $0[try $1.decode("campus", as: String.self)] = try $1.decode("n", as: Int.self)
        }
    }

    /// The id of the building `name` of `campus`.
    func placeId(of name: String, campus: String) async throws -> UUID {
        try #require(
            try await service.database.pool.query(
                "SELECT id FROM places WHERE name = \(name) AND kind = 'building' AND campus = \(campus)"
            ).first?.decode("id", as: UUID.self))
    }
}

extension Coordinate {
    /// `lat,lon`, as a route's query takes it.
    var text: String { "\(latitude),\(longitude)" }
}

extension [Double] {
    /// Whether this GeoJSON position (`[lon, lat]`) is `point`, to the 7 decimals a route's path keeps.
    func isNear(_ point: Coordinate) -> Bool {
        count == 2 && abs(self[0] - point.longitude) < 1e-6 && abs(self[1] - point.latitude) < 1e-6
    }
}
