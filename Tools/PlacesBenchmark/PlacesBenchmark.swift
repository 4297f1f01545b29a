import ArgumentParser
import BenchmarkSupport
import Foundation
import Logging
import PlaceCatalog
import Postgres
import ServiceKit

/// `places-benchmark [--sizes 5000,200000] [--queries 400]`: generates a campus-sized and a city-sized set of
/// places, imports each into a fresh database (then vacuums and analyses it) and reports import time and search
/// latency percentiles for prefix, typo and nearby searches at 1 and 32 concurrent clients. Needs
/// `BENCH_POSTGRES_URL` (a role that can create databases and the PostGIS extension; the test command's
/// `TEST_POSTGRES_URL` works). `--routes` measures routes instead (see `RouteBenchmark`).
@main
struct PlacesBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "places-benchmark",
        abstract: "Measures importing places and searching them, on fresh databases of generated places.")

    @Option(help: "How many places each round imports, comma-separated.")
    var sizes = "5000,200000"
    @Option(help: "How many searches each kind of search and client count makes.")
    var queries = 400
    @Flag(help: "Measure routes on the street network of --streets instead.")
    var routes = false
    @Option(help: "The OpenStreetMap extract whose streets --routes imports.")
    var streets = "data/helsinki-centre.osm.pbf"

    private var logger: Logger { Logger(label: "places-benchmark") }

    func run() async throws {
        if routes {
            try await RouteBenchmark(streets: URL(fileURLWithPath: streets), queries: queries, logger: logger).run()
            return
        }
        let campus = try CampusDirectory.load(extraFile: nil).campus(forDomain: "helsinki.fi")!
        print("| places | import | search | clients | p50 ms | p99 ms | searches/s |")
        print("| ---: | ---: | --- | ---: | ---: | ---: | ---: |")
        for size in sizes.split(separator: ",").compactMap({ Int($0) }) {
            let database = try await BenchmarkDatabase.fresh(
                named: "bench_places_\(size)", migrations: PlacePostgresRepository.migrations, poolSize: 32,
                logger: logger)
            let repository = PlacePostgresRepository(database: database)
            var random = SeededRandom(seed: UInt64(size))
            let (data, names) = Self.syntheticPlaces(count: size, around: campus, random: &random)
            let start = ContinuousClock.now
            let summary = try await PlaceImporter(repository: repository, campuses: CampusDirectory([campus]))
                .importGeoJSON(data, campus: campus)
            let importSeconds = (ContinuousClock.now - start).seconds
            precondition(summary.added == size, "expected \(size) places, imported \(summary)")
            // What autovacuum would do soon after such a load: statistics for the planner, a current visibility map.
            try await database.withConnection { try $0.execute(script: "VACUUM ANALYZE") }
            let span = Self.span(forCount: size)
            let kinds = searches(names: names, campus: campus, span: span, repository: repository)
            // Each connection's first statements load what a long-running server's connections have long had
            // (PostGIS, the unaccent rules, the catalogues): tens of milliseconds once, not part of a search.
            var warming = SeededRandom(seed: UInt64(size * 7))
            _ = try await LatencyRun.measure(
                kinds.flatMap { _, makeSearch in (0..<64).map { _ in makeSearch(&warming) } }, clients: 32)
            for (label, makeSearch) in kinds {
                for clients in [1, 32] {
                    var generator = SeededRandom(seed: UInt64(size * 31 + clients))
                    let jobs = (0..<queries).map { _ in makeSearch(&generator) }
                    let run = try await LatencyRun.measure(jobs, clients: clients)
                    print(
                        "| \(size) | \(String(format: "%.1f s", importSeconds)) "
                            + run.row(label, clients: clients, count: jobs.count))
                }
            }
            try await database.close()
        }
    }

    typealias Search = BenchmarkJob

    private func searches(names: [String], campus: Campus, span: Double, repository: PlacePostgresRepository)
        -> [(String, (inout SeededRandom) -> Search)]
    {
        let center = Coordinate(latitude: campus.center.latitude, longitude: campus.center.longitude)
        return [
            (
                "prefix",
                { random in
                    let name = names[Int(random.next() % UInt64(names.count))]
                    let text = String(name.prefix(3 + Int(random.next() % 4)))
                    return {
                        _ = try await repository.search(
                            text: text, near: center, campus: campus.domain, kind: nil, limit: 10)
                    }
                }
            ),
            (
                "typo",
                { random in
                    var letters = Array(names[Int(random.next() % UInt64(names.count))].split(separator: " ").last!)
                    let index = 1 + Int(random.next() % UInt64(max(1, letters.count - 2)))
                    if index + 1 < letters.count { letters.swapAt(index, index + 1) }
                    let text = String(letters)
                    return {
                        _ = try await repository.search(
                            text: text, near: center, campus: campus.domain, kind: nil, limit: 10)
                    }
                }
            ),
            (
                "nearby",
                { random in
                    let point = Coordinate(
                        latitude: center.latitude + (random.unit() - 0.5) * span,
                        longitude: center.longitude + (random.unit() - 0.5) * span * 2)
                    return {
                        _ = try await repository.nearby(point, radius: 500, campus: campus.domain, kind: nil, limit: 20)
                    }
                }
            ),
        ]
    }

    /// Degrees of latitude the places spread over: the campus for a few thousand, a city for more.
    static func span(forCount count: Int) -> Double {
        count <= 10_000 ? 0.015 : 0.2
    }

    /// A FeatureCollection of `count` named places (four in five to eat) and their names.
    static func syntheticPlaces(count: Int, around campus: Campus, random: inout SeededRandom) -> (Data, [String]) {
        let syllables = [
            "ka", "pu", "lä", "mö", "ri", "sa", "to", "vi", "ne", "jo", "hä", "ku", "ly", "pe", "so", "ta", "mi", "rö",
        ]
        let kinds = ["Ravintola", "Kahvila", "Café", "Pizzeria", "Bistro", "Baari", "Grilli", "Sushi", "Pub", "Deli"]
        let amenities = [
            "restaurant", "cafe", "cafe", "restaurant", "restaurant", "bar", "fast_food", "restaurant", "pub", "cafe",
        ]
        func word(_ random: inout SeededRandom) -> String {
            let length = 2 + Int(random.next() % 2)
            return (0..<length).map { _ in syllables[Int(random.next() % UInt64(syllables.count))] }.joined()
                .capitalized
        }
        let span = span(forCount: count)
        var features: [String] = []
        var names: [String] = []
        features.reserveCapacity(count)
        for index in 0..<count {
            let isFood = random.next() % 5 != 0
            let kindIndex = Int(random.next() % UInt64(kinds.count))
            let name = isFood ? "\(kinds[kindIndex]) \(word(&random))" : "\(word(&random))talo"
            names.append(name)
            let latitude = campus.center.latitude + (random.unit() - 0.5) * span
            let longitude = campus.center.longitude + (random.unit() - 0.5) * span * 2
            let tags = isFood ? "\"amenity\":\"\(amenities[kindIndex])\"" : "\"building\":\"yes\""
            features.append(
                "{\"type\":\"Feature\",\"properties\":{\"osm_type\":\"node\",\"osm_id\":\(index + 1),\(tags),"
                    + "\"name\":\"\(name)\",\"addr:street\":\"\(word(&random))katu\",\"addr:housenumber\":\"\(1 + random.next() % 80)\"},"
                    + "\"geometry\":{\"type\":\"Point\",\"coordinates\":[\(longitude),\(latitude)]}}")
        }
        let collection = "{\"type\":\"FeatureCollection\",\"features\":[" + features.joined(separator: ",") + "]}"
        return (Data(collection.utf8), names)
    }
}
