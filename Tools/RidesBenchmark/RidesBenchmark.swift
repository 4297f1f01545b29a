import ArgumentParser
import BenchmarkSupport
import Foundation
import Histogram
import Logging
import MatchingCore
import Postgres
import Rides
import ServiceKit

/// `rides-benchmark [--drivers 2000] [--requests 10000] [--rides 50] [--queries 400]`: fills a fresh matching database
/// with drivers of one campus, each with a profile and an online position, and open ride requests (each offered to
/// the nearest drivers as the flow does), all within a few km of the Helsinki campus centre; a few of the drivers
/// drive a ride. Then reports the open requests near a driver with 1 and 16 clients for two radii, and the position
/// write path with 16 clients. Needs `BENCH_POSTGRES_URL` (or the test command's `TEST_POSTGRES_URL`): a role that can
/// create databases and the PostGIS extension.
@main
struct RidesBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rides-benchmark",
        abstract: "Measures open ride requests near a driver and drivers' positions on a fresh database.")

    @Option(help: "How many drivers online.")
    var drivers = 2000
    @Option(help: "How many open ride requests.")
    var requests = 10_000
    @Option(help: "How many of the drivers drive a ride (their positions are paced to the rider).")
    var rides = 50
    @Option(help: "How many lists each radius and client count reads.")
    var queries = 400
    @Option(help: "How many positions each driver sends, a round of every driver at a time.")
    var positionRounds = 4

    /// The Helsinki campus centre, and how far drivers and requests spread from it.
    static let center = GeoPoint(lat: 60.1719, lon: 24.9492)
    static let spreadMeters = 3000.0
    static let metersPerDegree = 111_320.0
    /// The campus of the drivers and riders as wide as they spread, so that every pickup is on it and every driver
    /// near it.
    static let campuses = CampusPoints(
        CampusDirectory([
            Campus(
                domain: "helsinki.fi", name: "Helsinki, as wide as the benchmark",
                center: Campus.Point(latitude: center.lat, longitude: center.lon),
                bounds: Campus.Bounds(
                    minLatitude: moved(center, meters: spreadMeters, heading: -.pi / 2).lat,
                    minLongitude: moved(center, meters: spreadMeters, heading: .pi).lon,
                    maxLatitude: moved(center, meters: spreadMeters, heading: .pi / 2).lat,
                    maxLongitude: moved(center, meters: spreadMeters, heading: 0).lon))
        ]))

    func validate() throws {
        guard drivers >= 1, requests >= rides, rides <= drivers, queries >= 1, positionRounds >= 1 else {
            throw ValidationError(
                "--drivers, --queries and --position-rounds need at least 1; --rides at most --drivers and --requests")
        }
    }

    func run() async throws {
        let logger = Logger(label: "rides-benchmark")
        let database = try await BenchmarkDatabase.fresh(
            named: "bench_rides", migrations: [MatchingMigrations.directory, RidesFlow.migrations!], poolSize: 16,
            logger: logger)
        // Nothing expires or goes offline while the benchmark runs, however slow the machine.
        var settings = RideSettings()
        settings.rideLifetime = 3600
        settings.onlineWindow = 3600
        settings.campuses = Self.campuses
        let steps = RideSteps(database: database, settings: settings)
        var random = SeededRandom(seed: 12)

        let drivers = (0..<drivers).map { Identity(userId: UUID(), campus: "helsinki.fi", name: "Driver \($0)") }
        var positions = drivers.map { _ in Self.point(around: Self.center, within: Self.spreadMeters, &random) }
        let onlineDrivers: [BenchmarkJob] = zip(drivers, positions).map { driver, position in
            {
                _ = try await steps.saveDriver(car: "Toyota Yaris, ABC-123", seats: 3, caller: driver)
                _ = try await steps.reportPosition(position, caller: driver)
            }
        }
        let online = try await LatencyRun.measure(onlineDrivers, clients: 16)
        print("\(drivers.count) drivers online: \(online.perSecond(drivers.count)) a second")

        let riders = (0..<requests).map { Identity(userId: UUID(), campus: "helsinki.fi", name: "Rider \($0)") }
        let rideIds = riders.map { _ in UUID() }
        let requestRides: [BenchmarkJob] = zip(riders, rideIds).map { rider, rideId in
            let pickup = Self.point(around: Self.center, within: Self.spreadMeters, &random)
            let draft = RideDraft(pickup: .point(pickup), dropoff: nil, note: nil)
            return { _ = try await steps.requestRide(id: rideId, draft, caller: rider) }
        }
        let requested = try await LatencyRun.measure(requestRides, clients: 16)
        print(
            "\(requests) ride requests, each offered to the nearest drivers: \(requested.perSecond(requests)) a second "
                + "(p50 \(requested.milliseconds(50)) ms, p99 \(requested.milliseconds(99)) ms with 16 clients)")

        // `--rides` drivers, spread over the list, each accept a request: rides under way, whose positions are paced
        // to their riders.
        let rideDrivers = (0..<rides).map { $0 * drivers.count / max(1, rides) }
        for (number, index) in rideDrivers.enumerated() {
            _ = try await steps.accept(rideIds[number], caller: drivers[index])
        }
        // What autovacuum would do soon after such a load: statistics for the planner, a current visibility map.
        try await database.withConnection { try $0.execute(script: "VACUUM ANALYZE") }
        print("\(requests - rides) requests open, \(rides) rides under way\n")

        print("| measure | clients | p50 ms | p99 ms | per s | requests a list |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for radius in [500.0, 2000.0] {
            for clients in [1, 16] {
                let found = Tally()
                let jobs: [BenchmarkJob] = (0..<queries).map { _ in
                    let index = Int(random.next() % UInt64(drivers.count))
                    let (driver, near) = (drivers[index], positions[index])
                    return {
                        let list = try await steps.openRequests(
                            near: near, radiusMeters: radius, limit: 20, caller: driver)
                        found.add(list.requests.count)
                    }
                }
                let run = try await LatencyRun.measure(jobs, clients: clients)
                let label = "open requests within \(Int(radius)) m, 20 nearest"
                print(run.row(label, clients: clients, count: queries) + String(format: " %.1f |", found.average))
            }
        }

        // Every driver moves 20 to 50 m and reports it, a round at a time, with a pause between rounds: a ride's
        // positions are more than a second apart, as a phone's are, so that each one is sent to the rider at once
        // rather than left to the pacing timer.
        let isDrivingRide = Set(rideDrivers)
        let latencies = KindLatencies()
        var seconds = 0.0
        for _ in 0..<positionRounds {
            var order = Array(drivers.indices)
            for index in order.indices.reversed() {
                order.swapAt(index, Int(random.next() % UInt64(index + 1)))
            }
            let jobs: [BenchmarkJob] = order.map { index in
                positions[index] = Self.moved(
                    positions[index], meters: 20 + 30 * random.unit(), heading: 2 * .pi * random.unit())
                let (driver, position, kind) = (drivers[index], positions[index], isDrivingRide.contains(index))
                return {
                    let began = ContinuousClock.now
                    _ = try await steps.reportPosition(position, caller: driver)
                    latencies.record(ContinuousClock.now - began, isRideUnderway: kind)
                }
            }
            let round = try await LatencyRun.measure(jobs, clients: 16)
            seconds += round.seconds
            try await Task.sleep(for: .milliseconds(1100))
        }
        let all = latencies.run(isRideUnderway: nil, seconds: seconds)
        print(all.row("report position, every driver", clients: 16, count: drivers.count * positionRounds) + " |")
        for (label, kind) in [("of which no ride under way", false), ("of which a ride under way (paced, sent)", true)]
        {
            let run = latencies.run(isRideUnderway: kind, seconds: seconds)
            print("| \(label) | 16 | \(run.milliseconds(50)) | \(run.milliseconds(99)) |  | |")
        }
        try await database.close()
    }

    /// A point uniformly within `meters` of `origin`.
    static func point(around origin: GeoPoint, within meters: Double, _ random: inout SeededRandom) -> GeoPoint {
        moved(origin, meters: meters * random.unit().squareRoot(), heading: 2 * .pi * random.unit())
    }

    /// `origin` moved `meters` towards `heading` (radians from east, counter-clockwise).
    static func moved(_ origin: GeoPoint, meters: Double, heading: Double) -> GeoPoint {
        GeoPoint(
            lat: origin.lat + meters * sin(heading) / metersPerDegree,
            lon: origin.lon + meters * cos(heading) / (metersPerDegree * cos(origin.lat * .pi / 180)))
    }
}

/// Position latencies in microseconds, apart for drivers with and without a ride under way.
final class KindLatencies: @unchecked Sendable {
    private let lock = NSLock()
    private var rideUnderway = Histogram<UInt64>(highestTrackableValue: 60_000_000)
    private var noRide = Histogram<UInt64>(highestTrackableValue: 60_000_000)

    func record(_ duration: Duration, isRideUnderway: Bool) {
        let microseconds = UInt64(duration.seconds * 1e6)
        lock.withLock {
            _ = isRideUnderway ? rideUnderway.record(microseconds) : noRide.record(microseconds)
        }
    }

    /// The latencies of one kind, or of both when `isRideUnderway` is nil, as a run of `seconds`.
    func run(isRideUnderway: Bool?, seconds: Double) -> LatencyRun {
        let latencies = lock.withLock { () -> Histogram<UInt64> in
            switch isRideUnderway {
            case true?: return rideUnderway
            case false?: return noRide
            case nil:
                var both = noRide
                both.add(rideUnderway)
                return both
            }
        }
        return LatencyRun(latencies: latencies, seconds: seconds)
    }
}
