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

    // The campus has a few hundred places: few candidates make "r" begin more names than are scored, as "rav" does in
    // a city, and a small crowded prefix makes the search find them by distance.
    @Test(arguments: [1_000, 5])
    func aPrefixThatBeginsManyNamesScoresOnlyTheNearestOfThem(crowdedPrefix: Int) async throws {
        let app = try await PlacesTestApp.make()
        try await app.importFile(PlacesTestApp.bundledData)
        let repository = PlacePostgresRepository(
            database: app.database.pool, prefixCandidates: 10, crowdedPrefix: crowdedPrefix)
        let porthania = Coordinate(latitude: 60.1697, longitude: 24.9484)

        let crowded = try await repository.search(
            text: "r", near: porthania, campus: "helsinki.fi", kind: nil, limit: 10)
        let exact = try await repository.search(
            text: "porthania", near: porthania, campus: "helsinki.fi", kind: nil, limit: 10)
        let nearest = try await app.database.pool.query(
            """
            SELECT id FROM places WHERE retired_at IS NULL AND name_key LIKE 'r%'
            ORDER BY location <-> ST_SetSRID(ST_MakePoint(24.9484, 60.1697), 4326)::geography LIMIT 10
            """
        ).map { try $0.decode("id", as: UUID.self) }
        let begun = try await app.database.pool.query(
            "SELECT count(*)::int AS n FROM places WHERE retired_at IS NULL AND name_key LIKE 'r%'"
        ).first!.decode("n", as: Int.self)

        #expect(begun > 10)
        #expect(Set(crowded.map(\.id)) == Set(nearest))
        #expect(exact.first?.name == "Porthania")
    }

    @Test(arguments: [
        ("caf", 60.1697, 24.9484), ("kah", 60.1697, 24.9484), ("uni", 60.1697, 24.9484), ("porthnia", 60.1697, 24.9484),
        ("yliopistonkatu", 60.1697, 24.9484), ("ravintola", 60.1697, 24.9484), ("ka", 60.1697, 24.9484),
        ("caf", 60.1920, 24.9300), ("res", 60.1920, 24.9300), ("kai", 60.1920, 24.9300), ("unicfae", 60.1920, 24.9300),
    ])
    func searchRanksAsScoringEveryMatchWouldWhenTheNamesTheTextBeginsAreFew(
        text: String, latitude: Double, longitude: Double
    ) async throws {
        let app = try await PlacesTestApp.make()
        try await app.importFile(PlacesTestApp.bundledData)
        let repository = PlacePostgresRepository(database: app.database.pool)

        let found = try await repository.search(
            text: text, near: Coordinate(latitude: latitude, longitude: longitude), campus: "helsinki.fi", kind: nil,
            limit: 10)
        let expected = try await app.everyMatchRanked(text, latitude: latitude, longitude: longitude, limit: 10)

        #expect(!found.isEmpty)
        #expect(found.map(\.name) == expected.map(\.name))
        #expect(zip(found, expected).allSatisfy { abs(($0.distanceMeters ?? -1) - $1.distance) < 0.01 })
    }

    @Test(arguments: [PlaceKind?.none, .restaurant])
    func theNamesATextBeginsAreFoundAlikeByNameAndByDistance(kind: PlaceKind?) async throws {
        let app = try await PlacesTestApp.make()
        try await app.importFile(PlacesTestApp.bundledData)
        let byName = PlacePostgresRepository(database: app.database.pool)
        let byDistance = PlacePostgresRepository(database: app.database.pool, crowdedPrefix: 0)
        let point = Coordinate(latitude: 60.1720, longitude: 24.9450)
        // Places that tie in score and distance may come in either order: their names and distances are compared.
        func search(_ repository: PlacePostgresRepository, _ text: String) async throws -> [String] {
            try await repository.search(text: text, near: point, campus: "helsinki.fi", kind: kind, limit: 10)
                .map { "\($0.name) \($0.distanceMeters ?? -1)" }
        }

        var named: [[String]] = []
        var walked: [[String]] = []
        for text in ["r", "ka", "caf", "uni", "kai", "ravintola", "porthania", "cafe%"] {
            named.append(try await search(byName, text))
            walked.append(try await search(byDistance, text))
        }

        #expect(walked == named)
        #expect(named.filter { !$0.isEmpty }.count >= 6)
    }

    @Test func placesTheTextOnlyResemblesAreLookedForAsFarAsTheyCanRank() {
        #expect(PlaceQuery.reach(beside: [1.2, 1.1], limit: 3) == .anywhere)
        #expect(PlaceQuery.reach(beside: [1.2, 1.1, 0.7], limit: 3) == .anywhere)
        #expect(PlaceQuery.reach(beside: [1.2, 1.1, 0.875], limit: 3) == .within(meters: 1_251))
        #expect(PlaceQuery.reach(beside: [1.2, 1.1, 1], limit: 3) == .within(meters: 1))
        #expect(PlaceQuery.reach(beside: [1.2, 1.1, 1.01], limit: 3) == .nowhere)
        #expect(PlaceQuery.reach(beside: [1.2, 0.8, 0.75], limit: 3, best: 0.75) == .within(meters: 1))
        #expect(PlaceQuery.reach(beside: [1.2, 0.8, 0.375], limit: 3, best: 0.75) == .anywhere)
        #expect(PlaceQuery.reach(beside: [1.2, 0.8, 0.5], limit: 3, best: 0.75) == .within(meters: 2_501))
    }

    @Test func likeWildcardsAreEscapedEvenWithACombiningMark() {
        #expect(PlaceQuery.likeEscaped("50% off_now") == #"50\% off\_now"#)
        #expect(PlaceQuery.likeEscaped("%\u{301}_\u{308}\\\u{301}") == "\\%\u{301}\\_\u{308}\\\\\u{301}")
    }

    @Test func thePrefixEndComesAfterEveryTextThePrefixBegins() {
        #expect(PlaceQuery.prefixEnd(of: "rav") == "raw")
        #expect(PlaceQuery.prefixEnd(of: "kapulä") == "kapulå")
        #expect(PlaceQuery.prefixEnd(of: "a\u{D7FF}") == "a\u{E000}")
        #expect(PlaceQuery.prefixEnd(of: "a\u{10FFFF}") == "b")
        #expect(PlaceQuery.prefixEnd(of: "\u{10FFFF}") == nil)
        #expect(PlaceQuery.prefixEnd(of: "") == nil)
    }

    @Test func searchRanksAsScoringEveryMatchWouldAmongACitysPlaces() async throws {
        let app = try await PlacesTestApp.make()
        var random = SplitMix64(seed: 2_026)
        let city = PlacesTestApp.city(count: 4_000, random: &random)
        try await app.importFile(try PlacesTestApp.collection(city.features), campus: "helsinki.fi")
        let repository = PlacePostgresRepository(database: app.database.pool)
        // As typed: the first letters of a name, or its last word with two letters swapped.
        let texts = (0..<40).map { index in
            let name = city.names[Int(random.next() % UInt64(city.names.count))]
            guard index % 2 == 1 else { return String(name.prefix(3 + Int(random.next() % 4))) }
            var letters = Array(name.split(separator: " ").last!)
            letters.swapAt(1, 2)
            return String(letters)
        }

        var found: [[String]] = []
        var expected: [[String]] = []
        for (index, text) in texts.enumerated() {
            let latitude = 60.1312 + Double(index % 5) * 0.02
            found.append(
                try await repository.search(
                    text: text, near: Coordinate(latitude: latitude, longitude: 24.9497), campus: "helsinki.fi",
                    kind: nil, limit: 10
                ).map { "\($0.name) \(Int(($0.distanceMeters ?? -1) * 100))" })
            expected.append(
                try await app.everyMatchRanked(text, latitude: latitude, longitude: 24.9497, limit: 10).map {
                    "\($0.name) \(Int($0.distance * 100))"
                })
        }

        #expect(found == expected)
        #expect(found.joined().count > 200)
    }

    // The text begins three names, and resembles "Kapuxi" closely (0.8; "Kapuri" less, 0.67, as "kapul" is longer)
    // and "Kapa" less still (0.6; 0.5): seven of the former lie 2 km north, one of the latter 30 m from the searcher,
    // another 1.1 km.
    @Test(arguments: [("kapu", "Kapuxi", 60.1881), ("kapul", "Kapuri", 60.1855)])
    func aNearNameThatResemblesTheTextLessRanksAheadOfFarOnesThatResembleItMore(
        text: String, resemblingMore: String, latitude: Double
    ) async throws {
        let app = try await PlacesTestApp.make()
        let begun = ["sa", "ri", "to"].enumerated().map { index, syllable in
            PlacesTestApp.feature(id: index + 1, name: "\(text.capitalized)\(syllable)talo", latitude: 60.1742)
        }
        let more = (0..<7).map { index in
            PlacesTestApp.feature(
                id: index + 10, name: "Ravintola \(resemblingMore) \(index)",
                latitude: latitude + Double(index) * 0.0001,
                isRestaurant: true)
        }
        let less = [
            PlacesTestApp.feature(id: 20, name: "Ravintola Kapa", latitude: 60.1700, isRestaurant: true),
            PlacesTestApp.feature(id: 21, name: "Kahvila Kapa", latitude: 60.1796, isRestaurant: true),
        ]
        try await app.importFile(try PlacesTestApp.collection(begun + more + less), campus: "helsinki.fi")
        let repository = PlacePostgresRepository(database: app.database.pool)

        let found = try await repository.search(
            text: text, near: Coordinate(latitude: 60.1697, longitude: 24.9484), campus: "helsinki.fi", kind: nil,
            limit: 10)
        let expected = try await app.everyMatchRanked(text, latitude: 60.1697, longitude: 24.9484, limit: 10)

        #expect(found.map(\.name) == expected.map(\.name))
        #expect(found.prefix(4).map(\.name).last == "Ravintola Kapa")
        #expect(!found.contains { $0.name == "Kahvila Kapa" })
    }

    @Test func aNameThatHoldsTheTextAsAWordRanksAheadOfFarNamesTheTextBegins() async throws {
        let app = try await PlacesTestApp.make()
        // Twelve names "kap" begins lie 4 km north; "Ravintola Kap" 100 m and "Kahvila Kap" 1 km from the searcher.
        let far = (0..<12).map { index in
            PlacesTestApp.feature(
                id: index + 1, name: "Kapulatalo \(index)", latitude: 60.2057 + Double(index) * 0.0005)
        }
        let near = [
            PlacesTestApp.feature(id: 100, name: "Ravintola Kap", latitude: 60.1706, isRestaurant: true),
            PlacesTestApp.feature(id: 101, name: "Kahvila Kap", latitude: 60.1787, isRestaurant: true),
        ]
        try await app.importFile(try PlacesTestApp.collection(far + near), campus: "helsinki.fi")
        let repository = PlacePostgresRepository(database: app.database.pool)

        let found = try await repository.search(
            text: "kap", near: Coordinate(latitude: 60.1697, longitude: 24.9484), campus: "helsinki.fi", kind: nil,
            limit: 10)

        #expect(found.count == 10)
        #expect(found.first?.name == "Ravintola Kap")
        #expect(found.dropFirst().allSatisfy { $0.name.hasPrefix("Kapulatalo") })
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

    /// Every place whose text matches `text` scored and ranked as the search scores its candidates.
    func everyMatchRanked(_ text: String, latitude: Double, longitude: Double, limit: Int) async throws
        -> [(name: String, distance: Double)]
    {
        let rows = try await service.database.pool.transaction { connection in
            try connection.execute(script: "SET LOCAL pg_trgm.word_similarity_threshold = 0.45")
            return try connection.query(
                """
                WITH here AS (SELECT ST_SetSRID(ST_MakePoint(\(longitude), \(latitude)), 4326)::geography AS point),
                typed AS (SELECT lower(unaccent(\(text))) AS q)
                SELECT p.name, ST_Distance(p.location, here.point) AS distance,
                    word_similarity(typed.q, p.search_text)
                        + CASE WHEN p.name_key LIKE typed.q || '%' THEN 0.5 ELSE 0 END
                        + CASE WHEN p.name_key = typed.q THEN 0.25 ELSE 0 END
                        - least(ST_Distance(p.location, here.point) / 10000.0, 0.3) AS score
                FROM places p, here, typed
                WHERE p.retired_at IS NULL AND p.campus = 'helsinki.fi'
                  AND (p.name_key LIKE typed.q || '%' OR length(typed.q) >= 3
                      AND (typed.q <% p.search_text OR p.search_text LIKE '%' || typed.q || '%'))
                ORDER BY score DESC, distance, p.name
                LIMIT \(limit)
                """)
        }
        return try rows.map { (try $0.decode("name"), try $0.decode("distance")) }
    }

    /// `count` places named like a city's (`Ravintola Kapulä`, `Mörötalo`, four in five to eat) over a box as wide
    /// as a city around the campus, and their names.
    static func city(count: Int, random: inout SplitMix64) -> (features: [[String: Any]], names: [String]) {
        let syllables = ["ka", "pu", "lä", "mö", "ri", "sa", "to", "vi", "ne", "jo", "hä", "ku", "ly", "pe", "so"]
        let kinds = ["Ravintola", "Kahvila", "Café", "Pizzeria", "Bistro", "Pub", "Deli"]
        func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        var features: [[String: Any]] = []
        var names: [String] = []
        for index in 0..<count {
            let word = (0..<(2 + Int(random.next() % 2))).map { _ in pick(syllables) }.joined().capitalized
            let isRestaurant = random.next() % 5 != 0
            let name = isRestaurant ? "\(pick(kinds)) \(word)" : "\(word)talo"
            names.append(name)
            features.append(
                feature(
                    id: index + 1, name: name, latitude: 60.0712 + Double(random.next() % 20_000) / 100_000,
                    longitude: 24.7497 + Double(random.next() % 40_000) / 100_000, isRestaurant: isRestaurant))
        }
        return (features, names)
    }

    /// A named point feature: a building, or a restaurant.
    static func feature(
        id: Int, name: String, latitude: Double, longitude: Double = 24.9484, isRestaurant: Bool = false
    ) -> [String: Any] {
        var properties: [String: Any] = ["osm_type": "node", "osm_id": id, "name": name]
        if isRestaurant {
            properties["amenity"] = "restaurant"
        } else {
            properties["building"] = "yes"
        }
        return [
            "type": "Feature", "properties": properties,
            "geometry": ["type": "Point", "coordinates": [longitude, latitude]],
        ]
    }

    /// A file of `features` as one collection.
    static func collection(_ features: [[String: Any]]) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("places-\(UUID()).geojson")
        try JSONSerialization.data(withJSONObject: ["type": "FeatureCollection", "features": features]).write(to: url)
        return url
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

/// A small deterministic generator (SplitMix64), so that a test's places are the same on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
