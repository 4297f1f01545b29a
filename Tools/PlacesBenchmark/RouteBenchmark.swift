import BenchmarkSupport
import Foundation
import Logging
import PlaceCatalog
import Postgres
import ServiceKit

/// `places-benchmark --routes`: imports the bundled campus's street network into a fresh database and reports route
/// latency percentiles, walking and driving, between junctions of the campus picked at random (each moved a few
/// meters off the street), with 1 and 16 concurrent clients.
struct RouteBenchmark {
    let streets: URL
    let queries: Int
    let logger: Logger

    func run() async throws {
        let campuses = try CampusDirectory.load(extraFile: nil)
        let database = try await BenchmarkDatabase.fresh(
            named: "bench_routes", migrations: PlacePostgresRepository.migrations, poolSize: 16, logger: logger)
        let repository = RoutePostgresRepository(database: database)
        let start = ContinuousClock.now
        let summary = try await StreetImporter(repository: repository, campuses: campuses)
            .importStreets(streets, campus: nil)
        print(
            "imported \(streets.lastPathComponent) in \(String(format: "%.2f s", (ContinuousClock.now - start).seconds))"
        )
        print(summary)
        print("| route | clients | p50 ms | p99 ms | routes/s |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for mode in RouteMode.allCases {
            let junctions = try await database.query(
                """
                SELECT ST_Y(location::geometry) AS lat, ST_X(location::geometry) AS lon FROM route_vertices
                WHERE campus = 'helsinki.fi' AND \(unescaped: mode == .walk ? "is_on_walk_network" : "is_on_drive_network")
                ORDER BY id
                """
            ).map { Coordinate(latitude: try $0.decode("lat"), longitude: try $0.decode("lon")) }
            for clients in [1, 16] {
                var random = SeededRandom(seed: UInt64(clients * 7 + mode.rawValue.count))
                let jobs: [BenchmarkJob] = (0..<queries).map { _ in
                    let from = Self.nearby(junctions[Int(random.next() % UInt64(junctions.count))], random: &random)
                    let to = Self.nearby(junctions[Int(random.next() % UInt64(junctions.count))], random: &random)
                    return { _ = try await repository.route(from: from, to: to, mode: mode, campus: "helsinki.fi") }
                }
                let run = try await LatencyRun.measure(jobs, clients: clients)
                print(run.row(mode.rawValue, clients: clients, count: jobs.count))
            }
        }
        try await database.close()
    }

    /// `point` moved up to about 20 m north or south and east or west.
    static func nearby(_ point: Coordinate, random: inout SeededRandom) -> Coordinate {
        Coordinate(
            latitude: point.latitude + (random.unit() - 0.5) * 0.0004,
            longitude: point.longitude + (random.unit() - 0.5) * 0.0008)
    }
}
