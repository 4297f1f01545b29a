import Foundation
import Hummingbird
import HummingbirdTesting
import Postgres
import TestSupport
import Testing

@testable import PlaceCatalog
@testable import Places

@Suite struct PlaceSearchTests {
    @Test func searchFindsPorthaniaHoweverItIsTyped() async throws {
        let app = try await PlacesTestApp.make()
        try await app.importFile(PlacesTestApp.bundledData)
        let token = try await app.token()

        try await app.test { client in
            for typed in ["porthan", "Porthnia", "PORTHANIA", "porth"] {
                let places = try await client.places("/v1/places?q=\(typed)", token: token)
                #expect(places.first?["name"] as? String == "Porthania", "searching \(typed)")
            }
        }
    }

    @Test func aPrefixThatBeginsManyNamesScoresOnlyTheNearestOfThem() async throws {
        let app = try await PlacesTestApp.make()
        try await app.importFile(PlacesTestApp.bundledData)
        // The campus has a few hundred places; a small threshold makes "r" crowded as "rav" is in a city.
        let repository = PlacePostgresRepository(database: app.database.pool, crowdedPrefix: 20)
        let porthania = Coordinate(latitude: 60.1697, longitude: 24.9484)

        let crowded = try await repository.search(
            text: "r", near: porthania, campus: "helsinki.fi", kind: nil, limit: 10)
        let exact = try await repository.search(
            text: "porthania", near: porthania, campus: "helsinki.fi", kind: nil, limit: 10)
        let nearest = try await app.database.pool.query(
            """
            SELECT id FROM places WHERE retired_at IS NULL AND name_key LIKE 'r%'
            ORDER BY location <-> ST_SetSRID(ST_MakePoint(24.9484, 60.1697), 4326)::geography LIMIT 20
            """
        ).map { try $0.decode("id", as: UUID.self) }

        #expect(crowded.count == 10)
        #expect(crowded.allSatisfy { nearest.contains($0.id) })
        #expect(exact.first?.name == "Porthania")
    }

    @Test func searchIgnoresAccents() async throws {
        let app = try await PlacesTestApp.make()
        // NB: a file is the whole of its campus (what it lacks is retired), so the extra places go in the same file.
        try await app.importFile(try PlacesTestApp.bundledDataWithExtraFixture())
        let token = try await app.token()

        try await app.test { client in
            let kapyla = try await client.places("/v1/places?q=kapyla", token: token)
            let metsatalo = try await client.places("/v1/places?q=metsatalo&kind=building", token: token)
            let byAddress = try await client.places("/v1/places?q=yliopistonkatu%203", token: token)

            #expect(kapyla.first?["name"] as? String == "Käpylä Grilli")
            #expect(metsatalo.first?["name"] as? String == "Metsätalo")
            #expect(byAddress.contains { $0["name"] as? String == "Porthania" })
        }
    }

    @Test func cafesNearPorthaniaComeNearestFirstWithPostGISDistances() async throws {
        let app = try await PlacesTestApp.make()
        try await app.importFile(PlacesTestApp.bundledData)
        let token = try await app.token()
        let porthania = try #require(
            try await app.database.pool.query(
                "SELECT ST_Y(location::geometry) AS lat, ST_X(location::geometry) AS lon FROM places WHERE name = 'Porthania' AND kind = 'building'"
            ).first)
        let lat: Double = try porthania.decode("lat")
        let lon: Double = try porthania.decode("lon")

        try await app.test { client in
            let nearby = try await client.places(
                "/v1/places/nearby?lat=\(lat)&lon=\(lon)&radius=400&kind=restaurant", token: token)
            let cafes = try await client.places("/v1/places?q=cafe&near=\(lat),\(lon)&kind=restaurant", token: token)

            let distances = nearby.compactMap { $0["distanceMeters"] as? Double }
            #expect(distances.count == nearby.count && distances.count >= 5)
            #expect(distances == distances.sorted())
            #expect(distances.allSatisfy { $0 <= 400 })
            for place in nearby.prefix(10) {
                let id = try #require(place["id"] as? String)
                let expected = try await app.database.pool.query(
                    """
                    SELECT ST_Distance(location, ST_SetSRID(ST_MakePoint(\(lon), \(lat)), 4326)::geography) AS d
                    FROM places WHERE id = \(UUID(uuidString: id)!)
                    """
                ).first?.decode("d", as: Double.self)
                #expect(abs((place["distanceMeters"] as? Double ?? -1) - (expected ?? 0)) < 0.01)
            }
            #expect(!cafes.isEmpty)
            #expect(
                cafes.allSatisfy {
                    ($0["name"] as? String)?.lowercased().contains("caf") == true || $0["subtype"] as? String == "cafe"
                })
        }
    }

    @Test func aStudentOfAnotherCampusSeesNoneOfHelsinki() async throws {
        let app = try await PlacesTestApp.make()
        try await app.importFile(PlacesTestApp.bundledData)
        let token = try await app.token(campus: "aalto.fi")
        let porthaniaId = try #require(
            try await app.database.pool.query("SELECT id FROM places WHERE name = 'Porthania' LIMIT 1").first?
                .decode("id", as: UUID.self))

        try await app.test { client in
            let searched = try await client.places("/v1/places?q=porthania", token: token)
            let nearby = try await client.places("/v1/places/nearby?lat=60.1697&lon=24.9490&radius=2000", token: token)
            let (status, problem) = try await client.getJSON("/v1/places/\(porthaniaId)", token: token)

            #expect(searched.isEmpty)
            #expect(nearby.isEmpty)
            #expect(status == .notFound)
            #expect(problem["name"] == nil)
        }
    }

    @Test(arguments: [
        ("/v1/places?q=", "q"), ("/v1/places?q=\(String(repeating: "a", count: 101))", "q"), ("/v1/places", "q"),
        ("/v1/places/nearby?lat=200&lon=24.9", "lat"), ("/v1/places/nearby?lat=60.1&lon=24.9&radius=-1", "radius"),
        ("/v1/places/nearby?lat=60.1&lon=24.9&limit=1000000", "limit"), ("/v1/places?q=cafe&near=91,24", "near"),
        ("/v1/places?q=cafe&kind=castle", "kind"), ("/v1/places/nearby?lat=abc&lon=24.9", "lat"),
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

    @Test func metricsCountRequestsByRouteAndStatusInPrometheusText() async throws {
        let app = try await PlacesTestApp.make()
        let token = try await app.token()

        try await app.test { client in
            _ = try await client.getJSON("/v1/places?q=porthania", token: token)
            _ = try await client.getJSON("/v1/places?q=porthania", token: token)
            _ = try await client.getJSON("/v1/places?q=porthania", token: nil)
            let text = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }
            let lines = text.split(separator: "\n").map(String.init)

            #expect(lines.contains(#"http_requests_total{method="GET",route="/v1/places",status="200"} 2"#))
            #expect(lines.contains(#"http_requests_total{method="GET",route="/v1/places",status="401"} 1"#))
            #expect(lines.contains(#"http_request_duration_seconds_count{route="/v1/places"} 3"#))
            #expect(
                lines.contains { $0.hasPrefix(#"http_request_duration_seconds_bucket{route="/v1/places",le="0.001"}"#) }
            )
            #expect(lines.contains("# TYPE http_requests_total counter"))
        }
    }

    @Test func searchingWithoutATokenIs401() async throws {
        let app = try await PlacesTestApp.make()

        try await app.test { client in
            let (status, _) = try await client.getJSON("/v1/places?q=porthania", token: nil)
            #expect(status == .unauthorized)
        }
    }
}

@Suite struct PlaceImportTests {
    @Test func theBundledDataImportsAndAReimportChangesNothing() async throws {
        let app = try await PlacesTestApp.make()

        let first = try await app.importFile(PlacesTestApp.bundledData)
        let eventsAfterFirst = try await app.outboxTypes()
        let second = try await app.importFile(PlacesTestApp.bundledData)

        #expect(first.read == 510)
        #expect(first.added > 480)
        #expect(first.skipped["no name"] == 10)
        #expect(eventsAfterFirst.count == first.added)
        #expect(second.added == 0 && second.updated == 0 && second.retired == 0)
        #expect(second.unchanged == first.added)
        #expect(try await app.outboxTypes() == eventsAfterFirst)
    }

    @Test func anEditedCopyPublishesExactlyTheThreeChanges() async throws {
        let app = try await PlacesTestApp.make()
        try await app.importFile(PlacesTestApp.bundledData)
        let before = try await app.outboxTypes().count
        var collection = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: PlacesTestApp.bundledData)) as? [String: Any])
        var features = try #require(collection["features"] as? [[String: Any]])
        let renamedIndex = try #require(
            features.firstIndex { ($0["properties"] as? [String: Any])?["name"] as? String == "Porthania" })
        var properties = features[renamedIndex]["properties"] as! [String: Any]
        properties["name"] = "Porthania (renovated)"
        features[renamedIndex]["properties"] = properties
        let removed = features.remove(
            at: features.firstIndex { ($0["properties"] as? [String: Any])?["name"] as? String == "Metsätalo" }!)
        features.append([
            "type": "Feature",
            "properties": ["osm_type": "node", "osm_id": 9_999_999_999, "amenity": "cafe", "name": "Uusi Kahvila"],
            "geometry": ["type": "Point", "coordinates": [24.948, 60.170]],
        ])
        collection["features"] = features
        let edited = FileManager.default.temporaryDirectory.appendingPathComponent("edited-\(UUID()).geojson")
        try JSONSerialization.data(withJSONObject: collection).write(to: edited)

        let summary = try await app.importFile(edited)
        let events = try await app.database.pool.query(
            "SELECT type, payload->'place'->>'name' AS name FROM outbox ORDER BY seq OFFSET \(before)")

        #expect(summary.updated == 1 && summary.added == 1 && summary.retired == 1)
        #expect(events.count == 3)
        #expect(Set(try events.map { try $0.decode("type", as: String.self) }) == ["place.upserted", "place.retired"])
        #expect(
            Set(try events.compactMap { try $0.decode("name", as: String?.self) }) == [
                "Porthania (renovated)", "Uusi Kahvila",
            ])
        #expect((removed["properties"] as? [String: Any])?["name"] as? String == "Metsätalo")
    }

    @Test func aSequenceFileImportsWhatIsValidAndReportsWhatIsNot() async throws {
        let app = try await PlacesTestApp.make()

        let summary = try await app.importFile(PlacesTestApp.extraFixture)
        let inside = try await app.database.pool.query(
            "SELECT ST_Contains(outline::geometry, location::geometry) AS inside FROM places WHERE name = 'Testitalo'"
        ).first?.decode("inside", as: Bool.self)

        #expect(summary.read == 6)
        #expect(summary.added == 2)
        #expect(summary.skipped == ["a line, not a place": 1, "no name": 1])
        #expect(summary.broken == ["line 4: no geometry", "line 5: not valid JSON"])
        #expect(inside == true)
    }

    @Test func anOsmiumExportWithIdsImportsItsAreasAsPlacesWithTheirOpenStreetMapIds() async throws {
        let app = try await PlacesTestApp.make()

        let summary = try await app.importFile(PlacesTestApp.fixture("university-osmium.geojsonseq"))
        let stored = try await app.database.pool.query("SELECT source_key, name FROM places").reduce(
            into: [String: String]()
        ) {
            $0[try $1.decode("source_key", as: String.self)] = try $1.decode("name", as: String.self)
        }

        #expect(summary.broken.isEmpty)
        #expect(stored["relation/1320784"] == "Helsingin yliopiston päärakennus")
        #expect(stored["way/33185985"] == "Porthania")
        #expect(stored["way/161320960"] == "Kaisa-talo")
        #expect(stored.values.contains("UniCafe Rotunda"))
        #expect(stored.keys.contains { $0.hasPrefix("node/") })
        #expect(!stored.keys.contains { !$0.hasPrefix("node/") && !$0.hasPrefix("way/") && !$0.hasPrefix("relation/") })
    }

    @Test func osmiumAreaIdsStandForTheWayOrRelationTheyCameFrom() {
        func key(_ id: String) -> String? { GeoJSONReader.sourceKey(feature: ["id": id], properties: [:]) }
        #expect(key("a66371970") == "way/33185985")
        #expect(key("a2641569") == "relation/1320784")
        #expect(key("n5980931984") == "node/5980931984")
        #expect(key("w33185985") == "way/33185985")
        #expect(key("a") == nil)
        #expect(key("a12x") == nil)
    }

    @Test func anExportWithoutIdsGetsOneLineTellingHowToExportWithThem() async throws {
        let app = try await PlacesTestApp.make()

        let error = await #expect(throws: GeoJSONError.self) {
            try await app.importFile(PlacesTestApp.fixture("university-osmium-without-ids.geojsonseq"))
        }

        #expect(error?.description.contains("osmium export --add-unique-id=type_id") == true)
        #expect(error?.description.contains("\n") == false)
        #expect(try await app.outboxTypes().isEmpty)
    }

    @Test(arguments: ["extra.geojsonseq", "university-osmium-without-ids.geojsonseq"])
    func aBrokenFileRetiresNothing(file: String) async throws {
        let app = try await PlacesTestApp.make()
        let first = try await app.importFile(PlacesTestApp.bundledData)

        let summary = try? await app.importFile(PlacesTestApp.fixture(file))

        #expect(summary?.retired ?? 0 == 0)
        #expect(try await app.inService() == first.added + (summary?.added ?? 0))
        if let summary {
            #expect(summary.notRetired == first.added && summary.whyNotRetired?.contains("broken") == true)
        }
    }

    @Test func aFileWithoutAValidPlaceOfTheCampusRetiresNothing() async throws {
        let app = try await PlacesTestApp.make()
        let first = try await app.importFile(PlacesTestApp.bundledData)
        let lines = FileManager.default.temporaryDirectory.appendingPathComponent("lines-\(UUID()).geojsonseq")
        try Data(
            #"{"type":"Feature","id":"w1","properties":{"highway":"path"},"geometry":{"type":"LineString","coordinates":[[24.95,60.17],[24.951,60.171]]}}"#
                .utf8
        )
        .write(to: lines)

        let summary = try await app.importFile(lines, campus: "helsinki.fi")

        #expect(summary.retired == 0)
        #expect(summary.whyNotRetired == "the file holds no valid place")
        #expect(summary.description.contains("not retired \(first.added) places"))
        #expect(try await app.inService() == first.added)
    }

    @Test func retiringMoreThanAFifthOfACampusNeedsTheFlag() async throws {
        let app = try await PlacesTestApp.make()
        let first = try await app.importFile(PlacesTestApp.bundledData)
        let small = PlacesTestApp.fixture("university-osmium.geojsonseq")

        let refused = try await app.importFile(small, campus: "helsinki.fi")
        let inServiceAfterRefusal = try await app.inService()
        let allowed = try await app.importFile(small, campus: "helsinki.fi", retiresMany: true)

        #expect(refused.retired == 0)
        #expect(refused.whyNotRetired?.contains("--retire-many") == true)
        #expect(inServiceAfterRefusal == first.added + refused.added)
        #expect(allowed.retired == refused.notRetired && allowed.retired > 0)
        #expect(try await app.inService() == allowed.added + allowed.updated + allowed.unchanged)
    }

    @Test func aFileThatIsNotGeoJSONIsRefusedWhole() async throws {
        #expect(throws: GeoJSONError.self) { try GeoJSONReader.read(Data("{\"type\": \"Topology\"}".utf8)) }
        #expect(throws: GeoJSONError.self) { try GeoJSONReader.read(Data("nonsense\nmore nonsense\n".utf8)) }
    }

    @Test func placeIdsAreStableForAnObject() {
        #expect(PlaceImporter.placeId("node/1") == PlaceImporter.placeId("node/1"))
        #expect(PlaceImporter.placeId("node/1") != PlaceImporter.placeId("way/1"))
    }
}

extension PlacesTestApp {
    /// The bundled collection plus the valid features of the extra fixture, as one file.
    static func bundledDataWithExtraFixture() throws -> URL {
        var collection = try JSONSerialization.jsonObject(with: Data(contentsOf: bundledData)) as! [String: Any]
        let extra = try String(contentsOf: extraFixture, encoding: .utf8).split(separator: "\n").compactMap { line in
            try? JSONSerialization.jsonObject(with: Data(line.drop { $0 == "\u{1E}" }.utf8))
        }
        collection["features"] = (collection["features"] as! [Any]) + extra
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("combined-\(UUID()).geojson")
        try JSONSerialization.data(withJSONObject: collection).write(to: url)
        return url
    }

    static func fixture(_ name: String) -> URL {
        extraFixture.deletingLastPathComponent().appendingPathComponent(name)
    }

    /// How many places are in service.
    func inService() async throws -> Int {
        try await service.database.pool.query("SELECT count(*)::int AS n FROM places WHERE retired_at IS NULL").first!
            .decode("n", as: Int.self)
    }

    func outboxTypes() async throws -> [String] {
        try await service.database.pool.query("SELECT type FROM outbox ORDER BY seq").map { try $0.decode("type") }
    }
}
