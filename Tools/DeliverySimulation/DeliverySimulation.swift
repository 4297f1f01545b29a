import ArgumentParser
import BenchmarkSupport
import Contracts
import Delivery
import Foundation
import Logging
import MatchingCore
import Postgres
import ServiceKit

/// `delivery-simulation [--deliverers 300] [--orders 3000] [--seconds 120]`: a campus day compressed into
/// `seconds`, on the bundled Helsinki places, against a fresh database. Deliverers check in at popular
/// restaurants heading to campus buildings and answer offers after a human-like delay (most accept); orderers
/// order throughout. Reports the share of orders matched, the time from order to accept, and the deliverers'
/// extra walk. With `--open-orders N` it instead places N orders that wait (no deliverer is checked in) and reports
/// the latency of deliverers' open-request lists over them, with one client and sixteen. Needs `BENCH_POSTGRES_URL` (or the test command's `TEST_POSTGRES_URL`): a role that can create
/// databases.
@main
struct DeliverySimulation: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delivery-simulation",
        abstract:
            "Simulates a campus day of the delivery flow against a fresh database and reports how well it matched.")

    @Option(help: "How many deliverers check in over the first half of the day.")
    var deliverers = 300
    @Option(help: "How many orders are placed over the day.")
    var orders = 3000
    @Option(help: "How long the compressed day lasts, in seconds.")
    var seconds = 120.0
    @Option(help: "The GeoJSON of the campus places.")
    var places = "data/helsinki-centre-places.geojson"
    @Option(help: "Instead of the day: this many waiting orders, and the latency of the open requests over them.")
    var openOrders: Int?

    private var logger: Logger { Logger(label: "delivery-simulation") }

    func run() async throws {
        let database = try await BenchmarkDatabase.fresh(
            named: "simulation_matching", migrations: [MatchingMigrations.directory, DeliveryFlow.migrations!],
            poolSize: 16,
            logger: logger)
        let (restaurants, buildings) = try await loadPlaces(into: database)
        // A day's custom gathers at a few places: the twenty restaurants nearest the campus centre.
        let popular = Array(
            restaurants.sorted { $0.distance(to: campusCenter) < $1.distance(to: campusCenter) }.prefix(20))
        let campusBuildings = Array(
            buildings.sorted { $0.distance(to: campusCenter) < $1.distance(to: campusCenter) }.prefix(25))
        if let openOrders {
            try await measureOpenOrders(openOrders, database: database, restaurants: popular, buildings: buildings)
            return try await database.close()
        }
        var settings = DeliverySettings()
        settings.offerWindow = 5
        settings.orderLifetime = seconds / 4
        let steps = DeliverySteps(database: database, settings: settings)
        let timers = TimerScheduler(
            database: database, handlers: DeliveryFlow.timerHandlers(settings: settings), interval: .milliseconds(100),
            logger: logger)
        print(
            "simulating \(deliverers) deliverers and \(orders) orders over \(Int(seconds)) s at \(popular.count) restaurants"
        )

        let start = Date()
        let scheduler = Task { () -> Void in
            while !Task.isCancelled {
                _ = try? await timers.workDueTimers()
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        let answering = Task {
            try await answerOffers(steps, database: database, until: start.addingTimeInterval(seconds + 10))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for index in 0..<deliverers {
                    try await sleep(until: start.addingTimeInterval(seconds * 0.5 * Double(index) / Double(deliverers)))
                    var generator = SystemRandomNumberGenerator()
                    _ = try await steps.openRun(
                        id: nil, caller: Identity(userId: UUID(), campus: "helsinki.fi", name: "Deliverer \(index)"),
                        restaurantId: popular.randomElement(using: &generator)!.id,
                        destinationId: campusBuildings.randomElement(using: &generator)!.id,
                        capacity: Int.random(in: 1...3, using: &generator), minutes: Int(seconds / 60) + 2)
                }
            }
            group.addTask {
                for index in 0..<orders {
                    try await sleep(until: start.addingTimeInterval(seconds * Double(index) / Double(orders)))
                    var generator = SystemRandomNumberGenerator()
                    _ = try await steps.placeOrder(
                        id: nil, caller: Identity(userId: UUID(), campus: "helsinki.fi", name: "Orderer \(index)"),
                        restaurantIds: [popular.randomElement(using: &generator)!.id],
                        destination: .building(campusBuildings.randomElement(using: &generator)!.id), items: "Lunch",
                        runId: nil)
                }
            }
            try await group.waitForAll()
        }
        try await answering.value
        scheduler.cancel()
        try await report(database)
        try await database.close()
    }

    /// `count` orders from students all over the campus, each naming one to three of `restaurants`, to buildings or
    /// points; then 400 open-request lists from random points on the campus, half of them for one restaurant.
    private func measureOpenOrders(
        _ count: Int, database: PostgresPool, restaurants: [SimulatedPlace], buildings: [SimulatedPlace]
    ) async throws {
        var settings = DeliverySettings()
        settings.orderLifetime = 3600
        settings.campuses = CampusPoints(try CampusDirectory.load(extraFile: nil))
        let steps = DeliverySteps(database: database, settings: settings)
        let placing = try await LatencyRun.measure(
            (0..<count).map { index in
                {
                    var generator = SystemRandomNumberGenerator()
                    let named = restaurants.shuffled(using: &generator).prefix(Int.random(in: 1...3, using: &generator))
                    let destination: OrderDestination =
                        index.isMultiple(of: 2)
                        ? .building(buildings.randomElement(using: &generator)!.id)
                        : .point(Self.randomPoint(using: &generator))
                    _ = try await steps.placeOrder(
                        id: nil,
                        caller: Identity(userId: UUID(), campus: "helsinki.fi", name: "Orderer \(index) Surname"),
                        restaurantIds: named.map(\.id), destination: destination, items: "Lunch", runId: nil)
                }
            }, clients: 8)
        print("placed \(count) waiting orders in \(String(format: "%.1f", placing.seconds)) s")
        try await database.withConnection { try $0.execute(script: "VACUUM ANALYZE orders") }
        print("| orders | list | clients | p50 ms | p99 ms | lists/s |")
        print("| ---: | --- | ---: | ---: | ---: | ---: |")
        for clients in [1, 16] {
            let jobs: [BenchmarkJob] = (0..<400).map { index in
                {
                    var generator = SystemRandomNumberGenerator()
                    let page = try await steps.openOrders(
                        caller: Identity(userId: UUID(), campus: "helsinki.fi", name: "Deliverer"),
                        from: Self.randomPoint(using: &generator),
                        restaurantId: index.isMultiple(of: 2) ? restaurants.randomElement(using: &generator)!.id : nil,
                        limit: 20, after: nil)
                    precondition(page.orders.count == 20, "expected a full page of open orders")
                }
            }
            let run = try await LatencyRun.measure(jobs, clients: clients)
            print(
                "| \(count) | nearest 20 | \(clients) | \(run.milliseconds(50)) | \(run.milliseconds(99)) | \(run.perSecond(jobs.count)) |"
            )
        }
    }

    /// A point inside the Helsinki campus's box.
    private static func randomPoint(using generator: inout some RandomNumberGenerator) -> GeoPoint {
        GeoPoint(
            lat: Double.random(in: 60.165...60.178, using: &generator),
            lon: Double.random(in: 24.936...24.952, using: &generator))
    }

    /// Deliverers look at their offers every 100 ms and answer each after 0.3 to 4 s: 85 % accept, and deliver
    /// 5 to 15 s later.
    private func answerOffers(_ steps: DeliverySteps, database: PostgresPool, until end: Date)
        async throws
    {
        var answered = Set<UUID>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            while Date() < end {
                let pending = try await database.query("SELECT id, deliverer_id FROM offers WHERE status = 'pending'")
                for row in pending {
                    let offerId: UUID = try row.decode("id")
                    guard answered.insert(offerId).inserted else { continue }
                    let deliverer = Identity(userId: try row.decode("deliverer_id"), campus: "helsinki.fi", name: "")
                    group.addTask {
                        try await Task.sleep(for: .milliseconds(Int.random(in: 300...4000)))
                        if Double.random(in: 0..<1) < 0.85 {
                            guard let match = try? await steps.accept(offerId: offerId, caller: deliverer) else {
                                return
                            }
                            // The walk and the hand-over; then both confirm, which frees the seat.
                            try await Task.sleep(for: .milliseconds(Int.random(in: 5000...15000)))
                            let orderer = Identity(userId: match.ordererId, campus: "helsinki.fi", name: "")
                            _ = try? await steps.completeMatch(id: match.id, caller: deliverer)
                            _ = try? await steps.completeMatch(id: match.id, caller: orderer)
                        } else {
                            _ = try? await steps.decline(offerId: offerId, caller: deliverer)
                        }
                    }
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            try await group.waitForAll()
        }
    }

    private func report(_ database: PostgresPool) async throws {
        let row = try await database.query(
            """
            WITH accepted AS (
                SELECT DISTINCT ON (m.order_id) m.order_id,
                    extract(epoch FROM m.created_at - o.created_at) AS wait,
                    ST_Distance(ST_MakePoint(rd.longitude, rd.latitude)::geography,
                        ST_MakePoint(od.longitude, od.latitude)::geography) AS walk
                FROM matches m JOIN orders o ON o.id = m.order_id JOIN runs r ON r.id = m.run_id
                JOIN places rd ON rd.id = r.destination_id JOIN places od ON od.id = o.destination_id
                ORDER BY m.order_id, m.created_at
            )
            SELECT (SELECT count(*) FROM orders) AS orders, count(*) AS matched,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY wait) AS p50,
                percentile_cont(0.99) WITHIN GROUP (ORDER BY wait) AS p99,
                avg(walk) AS walk,
                (SELECT count(*) FROM offers) AS offers,
                (SELECT count(*) FROM offers WHERE status = 'declined') AS declined,
                (SELECT count(*) FROM offers WHERE status = 'expired') AS expired
            FROM accepted
            """
        ).first!
        let orders: Int = try row.decode("orders")
        let matched: Int = try row.decode("matched")
        print(
            "orders \(orders), matched \(matched) (\(String(format: "%.1f", 100 * Double(matched) / Double(max(1, orders)))) %)"
        )
        print(
            "order to accept: median \(String(format: "%.2f", try row.decode("p50", as: Double?.self) ?? 0)) s, "
                + "p99 \(String(format: "%.2f", try row.decode("p99", as: Double?.self) ?? 0)) s")
        print(
            "extra walk of the deliverer: average \(String(format: "%.0f", try row.decode("walk", as: Double?.self) ?? 0)) m"
        )
        print(
            "offers \(try row.decode("offers", as: Int.self)), declined \(try row.decode("declined", as: Int.self)), "
                + "expired \(try row.decode("expired", as: Int.self))")
    }

    private var campusCenter: SimulatedPlace { SimulatedPlace(id: UUID(), latitude: 60.1712, longitude: 24.9497) }

    /// The bundled places into the read model, as places' events would bring them.
    private func loadPlaces(into database: PostgresPool) async throws -> ([SimulatedPlace], [SimulatedPlace]) {
        let data = try Data(contentsOf: URL(fileURLWithPath: places))
        let features =
            (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["features"] as? [[String: Any]] ?? []
        var restaurants: [SimulatedPlace] = []
        var buildings: [SimulatedPlace] = []
        let snapshots: [PlaceSnapshot] = features.compactMap { feature in
            guard let properties = feature["properties"] as? [String: Any], let name = properties["name"] as? String,
                let coordinates = (feature["geometry"] as? [String: Any])?["coordinates"] as? [Double],
                coordinates.count == 2
            else { return nil }
            let kind = properties["amenity"] is String && properties["building"] == nil ? "restaurant" : "building"
            let place = SimulatedPlace(id: UUID(), latitude: coordinates[1], longitude: coordinates[0])
            if kind == "restaurant" { restaurants.append(place) } else { buildings.append(place) }
            return PlaceSnapshot(
                placeId: place.id, campus: "helsinki.fi", name: name, kind: kind, subtype: nil,
                latitude: place.latitude,
                longitude: place.longitude)
        }
        try await database.transaction { connection in
            for snapshot in snapshots {
                try ReadModels.applyPlace(snapshot, version: 1, isRetired: false, on: connection)
            }
        }
        return (restaurants, buildings)
    }

    private func sleep(until date: Date) async throws {
        let interval = date.timeIntervalSinceNow
        if interval > 0 { try await Task.sleep(for: .milliseconds(Int(interval * 1000))) }
    }
}

/// A place of the simulation.
struct SimulatedPlace: Sendable {
    var id: UUID
    var latitude: Double
    var longitude: Double

    /// Meters, by the equirectangular approximation (good enough across a campus).
    func distance(to other: SimulatedPlace) -> Double {
        let x = (other.longitude - longitude) * .pi / 180 * cos((latitude + other.latitude) / 2 * .pi / 180)
        let y = (other.latitude - latitude) * .pi / 180
        return (x * x + y * y).squareRoot() * 6_371_000
    }
}
