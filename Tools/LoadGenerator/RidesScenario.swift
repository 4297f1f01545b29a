import Foundation
import NIOConcurrencyHelpers

/// `load rides --drivers 2000 --rides 50`: as many drivers online within about 2 km of the campus centre (a profile,
/// then a first position), and as many riders each with a ride request that a driver of their own accepts. Then
/// every driver sends a position every `--position-every` seconds, spread evenly over that time and a few tens of
/// meters from the last, for the run's length: the PUT's latency, and for the rides' drivers the time from the PUT to
/// the `location` frame on the rider's socket. At the end every ride is completed (or cancelled) and every driver
/// goes offline, so that the next run starts clean.
struct RidesScenario {
    let options: LoadOptions
    let population: Population
    /// Records the set-up and the clean-up, apart from the measured positions.
    let setUp: StudentActions
    let actions: StudentActions
    let center: Position

    /// A point on the map, in degrees.
    struct Position: Sendable {
        var lat: Double
        var lon: Double
    }

    /// A driver of the run and where they are when the measured phase begins.
    struct Driver: Sendable {
        var index: Int
        var student: Student
        var start: Position
        /// The ride this driver drives, if any.
        var rideId: String?
    }

    /// A ride under way: its rider and the driver who accepted it.
    struct Ride: Sendable {
        var id: String
        var rider: Student
        var driver: Student
    }

    static let positionOperation = "PUT /v1/rides/driver/location"
    static let ridePositionOperation = "PUT /v1/rides/driver/location (ride under way)"
    /// Meters in a degree of latitude.
    static let metersPerDegree = 111_320.0
    /// How far from the campus centre drivers start and stay.
    static let radiusMeters = 2000.0

    var drivers: [Student] { Array(population.students.prefix(options.drivers)) }
    var riders: [Student] { Array(population.students.dropFirst(options.drivers).prefix(options.rides)) }

    /// The indexes of the drivers who drive the rides: spread evenly over the drivers, and so over the time between
    /// positions, so that the rides' positions are not sent in one burst.
    var rideDriverIndexes: [Int] {
        (0..<options.rides).map { $0 * options.drivers / options.rides }
    }

    /// Who holds a socket: the riders and the rides' drivers, or every driver too with `--all-sockets`.
    var socketHolders: [Student] {
        options.allSockets ? population.students : riders + rideDriverIndexes.map { drivers[$0] }
    }

    /// Every driver online and every ride accepted; nil when not one ride could be set up.
    func start() async -> (drivers: [Driver], rides: [Ride])? {
        let drivers = self.drivers
        var random = SystemRandomNumberGenerator()
        let starts = drivers.map { _ in point(around: center, within: Self.radiusMeters * 0.9, &random) }
        let online = await concurrentMap(Array(drivers.enumerated()), width: 32) { index, driver -> Int? in
            let profile = await setUp.gateway.call(
                .PUT, "/v1/rides/driver", token: driver.token,
                body: ["car": "Toyota Yaris, ABC-\(100 + index % 900)", "seats": 3])
            guard profile?.isSuccess == true,
                await setUp.gateway.call(
                    .PUT, "/v1/rides/driver/location", token: driver.token,
                    body: ["lat": starts[index].lat, "lon": starts[index].lon])?.isSuccess == true
            else { return nil }
            return index
        }
        let isOnline = Set(online.compactMap { $0 })
        print("rides: \(isOnline.count) of \(drivers.count) drivers online")
        let pairs = Array(zip(riders, rideDriverIndexes))
        let rides = await concurrentMap(pairs, width: 16) { rider, driverIndex -> Ride? in
            guard isOnline.contains(driverIndex) else { return nil }
            let driver = drivers[driverIndex]
            // The pickup a few hundred meters from the driver: a ride about to begin.
            var random = SystemRandomNumberGenerator()
            let pickup = point(around: starts[driverIndex], within: 600, &random)
            guard
                let requested = await setUp.gateway.call(
                    .POST, "/v1/rides", token: rider.token,
                    body: ["id": UUID().uuidString, "pickup": ["lat": pickup.lat, "lon": pickup.lon]]),
                requested.isSuccess, let rideId = requested.json.id("id")
            else { return nil }
            setUp.ledger.watch(ride: rideId, rider: rider.id)
            let accepted = await setUp.gateway.call(
                .POST, "/v1/rides/\(rideId)/accept", operation: "POST /v1/rides/{id}/accept", token: driver.token)
            guard accepted?.isSuccess == true else {
                await cancel(rideId, by: rider)
                return nil
            }
            return Ride(id: rideId, rider: rider, driver: driver)
        }.compactMap { $0 }
        if rides.count < options.rides {
            setUp.measurements.count("rides that could not be set up", by: options.rides - rides.count)
        }
        print("rides: \(rides.count) rides accepted and under way")
        guard !rides.isEmpty else { return nil }
        let rideOf = Dictionary(uniqueKeysWithValues: rides.map { ($0.driver.id, $0.id) })
        let fleet = drivers.enumerated().filter { isOnline.contains($0.offset) }.map { index, student in
            Driver(index: index, student: student, start: starts[index], rideId: rideOf[student.id])
        }
        return (fleet, rides)
    }

    /// The measured phase: every driver sends a position every `--position-every` seconds; returns the seconds it
    /// ran.
    func drive(_ fleet: [Driver]) async -> Double {
        let start = Stopwatch.now()
        let end = start + options.seconds
        let period = options.positionEvery
        print(
            "rides: \(fleet.count) drivers send a position every \(period) s for \(Int(options.seconds)) s "
                + "(\(Int(Double(fleet.count) / period)) a second)")
        await withTaskGroup(of: Void.self) { group in
            for driver in fleet {
                // Driver i of n sends at i/n of the period: an even stream rather than bursts.
                let offset = period * Double(driver.index) / Double(options.drivers)
                group.addTask { await driving(driver, from: start + offset, every: period, until: end) }
            }
        }
        return Stopwatch.now() - start
    }

    private func driving(_ driver: Driver, from first: Double, every period: Double, until end: Double) async {
        var random = SystemRandomNumberGenerator()
        var position = driver.start
        var heading = Double.random(in: 0..<(2 * .pi), using: &random)
        var due = first
        while due < end {
            let wait = due - Stopwatch.now()
            if wait > 0 { try? await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
            // About 25 km/h in town: 20 to 50 m between positions, turning now and then, back towards the centre
            // when at the edge.
            if distance(position, center) > Self.radiusMeters {
                heading = atan2(center.lat - position.lat, (center.lon - position.lon) * cos(center.lat * .pi / 180))
            } else {
                heading += Double.random(in: -0.6...0.6, using: &random)
            }
            position = moved(position, meters: Double.random(in: 20...50, using: &random), heading: heading)
            await report(position, by: driver)
            due += period
            // A driver whose PUT took longer than the period skips the positions it missed, as a phone would.
            while due < Stopwatch.now() { due += period }
        }
    }

    private func report(_ position: Position, by driver: Driver) async {
        let ledger = actions.ledger
        let body: [String: Any] = ["lat": position.lat, "lon": position.lon]
        guard let rideId = driver.rideId else {
            await actions.gateway.call(
                .PUT, "/v1/rides/driver/location", operation: Self.positionOperation, token: driver.student.token,
                body: body)
            return
        }
        ledger.sending(position: position.lat, position.lon, ride: rideId, at: Stopwatch.now())
        let answer = await actions.gateway.call(
            .PUT, "/v1/rides/driver/location", operation: Self.ridePositionOperation, token: driver.student.token,
            body: body)
        let isSuccess = answer?.isSuccess == true
        ledger.answered(position: position.lat, position.lon, ride: rideId, at: Stopwatch.now(), isSuccess: isSuccess)
    }

    /// Completes every ride (arrived, started with the code its rider reads, completed), cancelling one that cannot
    /// be, and takes every driver offline.
    func finish(drivers fleet: [Driver], rides: [Ride]) async {
        _ = await concurrentMap(rides, width: 16) { ride in
            let code = await setUp.gateway.call(
                .GET, "/v1/rides/\(ride.id)", operation: "GET /v1/rides/{id}", token: ride.rider.token)?.json.string(
                    "code")
            for step in ["arrived", "started", "completed"] {
                let answer = await setUp.gateway.call(
                    .POST, "/v1/rides/\(ride.id)/\(step)", operation: "POST /v1/rides/{id}/\(step)",
                    token: ride.driver.token, body: step == "started" ? ["code": code ?? ""] : nil)
                guard answer?.isSuccess == true else { return await cancel(ride.id, by: ride.rider) }
            }
        }
        _ = await concurrentMap(fleet, width: 32) { driver in
            await setUp.gateway.call(
                .DELETE, "/v1/rides/driver/location", operation: "DELETE /v1/rides/driver/location",
                token: driver.student.token)
        }
    }

    private func cancel(_ rideId: String, by rider: Student) async {
        await setUp.gateway.call(
            .POST, "/v1/rides/\(rideId)/cancel", operation: "POST /v1/rides/{id}/cancel", token: rider.token,
            expected: [409])
    }

    // MARK: The map

    /// A point uniformly within `meters` of `origin`.
    private func point(around origin: Position, within meters: Double, _ random: inout SystemRandomNumberGenerator)
        -> Position
    {
        let distance = meters * Double.random(in: 0...1, using: &random).squareRoot()
        return moved(origin, meters: distance, heading: Double.random(in: 0..<(2 * .pi), using: &random))
    }

    /// `origin` moved `meters` towards `heading` (radians from east, counter-clockwise), rounded to a millionth of a
    /// degree (about 10 cm) as a phone reports it.
    private func moved(_ origin: Position, meters: Double, heading: Double) -> Position {
        let lat = origin.lat + meters * sin(heading) / Self.metersPerDegree
        let lon = origin.lon + meters * cos(heading) / (Self.metersPerDegree * cos(origin.lat * .pi / 180))
        return Position(lat: (lat * 1e6).rounded() / 1e6, lon: (lon * 1e6).rounded() / 1e6)
    }

    /// Meters between two points nearby (an equirectangular approximation).
    private func distance(_ a: Position, _ b: Position) -> Double {
        let dx = (a.lon - b.lon) * cos(b.lat * .pi / 180)
        return ((a.lat - b.lat) * (a.lat - b.lat) + dx * dx).squareRoot() * Self.metersPerDegree
    }
}

/// Runs `body` for every item, `width` at a time; the results in the items' order.
private func concurrentMap<Item: Sendable, Result: Sendable>(
    _ items: [Item], width: Int, _ body: @escaping @Sendable (Item) async -> Result
) async -> [Result] {
    let next = NIOLockedValueBox(0)
    let results = await withTaskGroup(of: [(Int, Result)].self) { group in
        for _ in 0..<min(width, items.count) {
            group.addTask {
                var made: [(Int, Result)] = []
                while true {
                    let index = next.withLockedValue { value -> Int in
                        defer { value += 1 }
                        return value
                    }
                    guard index < items.count else { return made }
                    made.append((index, await body(items[index])))
                }
            }
        }
        return await group.reduce(into: []) { $0 += $1 }
    }
    return results.sorted { $0.0 < $1.0 }.map(\.1)
}
