import Contracts
import Foundation
import MatchingCore
import Postgres
import ServiceKit

/// The rides flow's data in matching's database, on one connection inside an open transaction: the only file with
/// its SQL, with `+offers`, and its rows (`+rows`). Each method is one query, or a small fixed group, and its decoding;
/// what to do with the answers is the steps' and the rules' business.
struct RidesPostgresRepository: Sendable {
    let connection: PostgresConnection
    /// How long a driver stays online after their last position.
    let onlineWindow: TimeInterval

    /// Whether a position reported at `reported_at` (of `ride_driver_positions p`) keeps its driver online.
    var isOnline: SQL {
        "p.reported_at > now() - \(onlineWindow)::double precision * interval '1 second'"
    }

    // MARK: Drivers

    /// Creates or replaces the driver profile of `caller`.
    func upsertDriver(car: String, seats: Int, caller: Identity) throws {
        try connection.query(
            """
            INSERT INTO ride_drivers (user_id, campus, name, car, seats)
            VALUES (\(caller.userId), \(caller.campus), \(caller.name), \(car), \(seats))
            ON CONFLICT (user_id) DO UPDATE SET campus = excluded.campus, name = excluded.name, car = excluded.car,
                seats = excluded.seats, version = ride_drivers.version + 1, updated_at = now()
            """)
    }

    /// A driver profile of the campus, with whether they are online and where they last were.
    func driver(_ userId: UUID, campus: String) throws -> Driver? {
        try connection.query(
            """
            SELECT d.user_id, coalesce(u.name, d.name) AS name, d.car, d.seats, d.updated_at,
                ST_Y(p.location::geometry) AS lat, ST_X(p.location::geometry) AS lon, p.reported_at,
                coalesce(\(isOnline), false) AS online
            FROM ride_drivers d LEFT JOIN users u ON u.id = d.user_id
                LEFT JOIN ride_driver_positions p ON p.driver_id = d.user_id
            WHERE d.user_id = \(userId) AND d.campus = \(campus)
            """
        ).first.map { row in
            let at: Date? = try row.decode("reported_at")
            return Driver(
                userId: try row.decode("user_id"), name: try row.decode("name"), car: try row.decode("car"),
                seats: try row.decode("seats"), isOnline: try row.decode("online"),
                position: try at.map { LivePosition(lat: try row.decode("lat"), lon: try row.decode("lon"), at: $0) },
                updatedAt: try row.decode("updated_at"))
        }
    }

    /// Forgets a driver's position.
    func deletePosition(of driverId: UUID) throws {
        try connection.query("DELETE FROM ride_driver_positions WHERE driver_id = \(driverId)")
    }

    /// Keeps the caller's latest position, and whether it is near their campus, when they have a driver profile of
    /// their campus (nil when not), and locks the ride they drive under way, if any. NB: one statement checks the
    /// profile, writes the position and locks the ride: hundreds of drivers send one a second, and each round trip
    /// holds a connection.
    func savePosition(_ point: GeoPoint, isNearCampus: Bool, caller: Identity) throws -> SavedPosition? {
        try connection.query(
            """
            WITH driver AS (
                SELECT d.user_id, coalesce(u.name, d.name) AS name, d.car, d.seats, d.updated_at
                FROM ride_drivers d LEFT JOIN users u ON u.id = d.user_id
                WHERE d.user_id = \(caller.userId) AND d.campus = \(caller.campus)
            ), position AS (
                INSERT INTO ride_driver_positions (driver_id, campus, location, is_near_campus, reported_at)
                SELECT user_id, \(caller.campus), \(point.geography), \(isNearCampus), now() FROM driver
                ON CONFLICT (driver_id) DO UPDATE SET campus = excluded.campus, location = excluded.location,
                    is_near_campus = excluded.is_near_campus, reported_at = excluded.reported_at
                RETURNING ST_Y(location::geometry) AS lat, ST_X(location::geometry) AS lon, reported_at
            ), ride AS (
                SELECT id, rider_id, position_sent_at, position_pending FROM rides
                WHERE driver_id = \(caller.userId) AND status IN ('accepted', 'arrived', 'started')
                FOR UPDATE
            )
            SELECT driver.*, position.*, ride.id AS ride_id, ride.rider_id, ride.position_sent_at,
                ride.position_pending, clock_timestamp() AS now
            FROM driver CROSS JOIN position LEFT JOIN ride ON true
            """
        ).first.map(SavedPosition.init)
    }

    // MARK: Requests

    /// The rider of a ride, whoever asks.
    func riderOf(_ rideId: UUID) throws -> UUID? {
        try connection.query("SELECT rider_id FROM rides WHERE id = \(rideId)").first?.decode("rider_id")
    }

    /// Whether the rider has a request that is not over.
    func hasUnfinishedRequest(riderId: UUID) throws -> Bool {
        try !connection.query(
            """
            SELECT 1 AS unfinished FROM rides
            WHERE rider_id = \(riderId) AND status IN ('open', 'accepted', 'arrived', 'started')
            """
        ).isEmpty
    }

    /// Inserts an open request; false when a ride of that id exists already. A rider's second request that is not
    /// over throws a unique violation (`rides_one_unfinished_per_rider`).
    func insertRide(
        id rideId: UUID, caller: Identity, pickup: (point: GeoPoint, placeId: UUID?),
        dropoff: (point: GeoPoint, placeId: UUID?)?, note: String?, expiresAt: Date
    ) throws -> Bool {
        let dropoffPoint: SQL = dropoff.map(\.point.geography) ?? "NULL"
        return try !connection.query(
            """
            INSERT INTO rides (id, campus, rider_id, rider_name, pickup, pickup_place_id, dropoff,
                dropoff_place_id, note, status, expires_at)
            VALUES (\(rideId), \(caller.campus), \(caller.userId), \(caller.name), \(pickup.point.geography),
                \(pickup.placeId)::uuid, \(dropoffPoint), \(dropoff?.placeId)::uuid, \(note), 'open',
                \(expiresAt))
            ON CONFLICT (id) DO NOTHING
            RETURNING id
            """
        ).isEmpty
    }

    /// The ride the caller asked for, or drives, that is not over; a rider's first.
    func currentRideId(of caller: Identity) throws -> UUID? {
        try connection.query(
            """
            SELECT id FROM rides
            WHERE campus = \(caller.campus) AND (
                (rider_id = \(caller.userId) AND status IN ('open', 'accepted', 'arrived', 'started'))
                OR (driver_id = \(caller.userId) AND status IN ('accepted', 'arrived', 'started')))
            ORDER BY rider_id = \(caller.userId) DESC
            LIMIT 1
            """
        ).first?.decode("id")
    }

    /// Open requests of the caller's campus within `radiusMeters` of `point`, nearest first, at most `limit`, never
    /// the caller's own nor of a rider in a block with them.
    func openRequests(near point: GeoPoint, radiusMeters: Double, limit: Int, caller: Identity) throws -> [RideRequest]
    {
        // NB: the nearest are found by walking the spatial index in distance order (`<->`, on the sphere) within a
        // box around the circle, so that a circle with thousands of requests costs the few read, not a distance
        // for each (and ST_DWithin, which costs milliseconds a query, is not needed). Only they are joined to
        // names and positions: the planner expects about one request in the circle, and would join hundreds by
        // nested loops. They are then kept and sorted by the exact distance. The sphere is within 0.5 % of it: the
        // walk reaches that much past the circle, and of two requests at the very end of a full list, either may
        // be the one kept.
        let here = point.geography
        return try connection.query(
            """
            SELECT \(Self.rideColumns), r.distance
            FROM (
                SELECT rides.*, ST_Distance(pickup, \(here)) AS distance FROM rides
                WHERE campus = \(caller.campus) AND status = 'open' AND expires_at > now()
                    AND rider_id <> \(caller.userId) AND \(ReadModels.unblocked("rider_id", "\(caller.userId)::uuid"))
                    AND pickup && \(point.box(meters: radiusMeters))
                    AND pickup <-> \(here) <= \(radiusMeters * 1.005)::double precision
                ORDER BY pickup <-> \(here)
                LIMIT \(limit)
            ) r \(Self.rideJoins)
            WHERE r.distance <= \(radiusMeters)::double precision
            ORDER BY r.distance, r.id
            """
        ).map(Self.rideRequest)
    }

    // MARK: Rides

    /// A ride, whoever asks, without its code.
    func ride(_ id: UUID) throws -> Ride? {
        try connection.query("SELECT \(Self.rideColumns) FROM rides r \(Self.rideJoins) WHERE r.id = \(id)")
            .first.map { try Self.ride($0) }
    }

    /// A ride of the caller's campus of which they are the rider or the driver, with its code when they are its rider.
    func ride(_ id: UUID, visibleTo caller: Identity) throws -> Ride? {
        try connection.query(
            """
            SELECT \(Self.rideColumns) FROM rides r \(Self.rideJoins)
            WHERE r.id = \(id) AND r.campus = \(caller.campus)
                AND \(caller.userId)::uuid IN (r.rider_id, r.driver_id)
            """
        ).first.map { try Self.ride($0, shownTo: caller.userId) }
    }

    /// A ride of the caller's campus of which they are the rider or the driver, locked.
    func lockRide(_ id: UUID, partyTo caller: Identity) throws -> LockedRide? {
        try connection.query(
            """
            SELECT id, campus, rider_id, driver_id, match_id, status, code, wrong_codes, cancel_reason FROM rides
            WHERE id = \(id) AND campus = \(caller.campus) AND \(caller.userId)::uuid IN (rider_id, driver_id)
            FOR UPDATE
            """
        ).first.map(LockedRide.init)
    }

    /// The rides under way between two students, either the rider, locked.
    func lockRidesUnderway(between a: UUID, _ b: UUID) throws -> [LockedRide] {
        try connection.query(
            """
            SELECT id, campus, rider_id, driver_id, match_id, status, code, wrong_codes, cancel_reason FROM rides
            WHERE status IN ('accepted', 'arrived', 'started')
              AND ((rider_id = \(a) AND driver_id = \(b)) OR (rider_id = \(b) AND driver_id = \(a)))
            ORDER BY id FOR UPDATE
            """
        ).map(LockedRide.init)
    }

    /// Whether a ride is of the campus.
    func isOfCampus(_ rideId: UUID, campus: String) throws -> Bool {
        try !connection.query("SELECT 1 AS known FROM rides WHERE id = \(rideId) AND campus = \(campus)").isEmpty
    }

    /// Whether the driver holds a ride under way.
    func hasRideUnderway(driverId: UUID) throws -> Bool {
        try !connection.query(
            """
            SELECT 1 AS underway FROM rides
            WHERE driver_id = \(driverId) AND status IN ('accepted', 'arrived', 'started')
            """
        ).isEmpty
    }

    /// Gives the ride to the caller as its driver, with a new `code`, in one conditional UPDATE: only while it is of
    /// their campus, open, not expired and not their own. Nil when it was not; a second ride under way of theirs throws
    /// a unique violation (`rides_one_underway_per_driver`).
    func acceptIfOpen(_ rideId: UUID, driver: Driver, match matchId: UUID, code: String, caller: Identity) throws
        -> (riderId: UUID, version: Int64)?
    {
        try connection.query(
            """
            UPDATE rides SET status = 'accepted', driver_id = \(caller.userId), driver_name = \(driver.name),
                car = \(driver.car), seats = \(driver.seats), match_id = \(matchId), accepted_at = now(),
                code = \(code), wrong_codes = 0, next_offer_at = NULL, version = version + 1
            WHERE id = \(rideId) AND campus = \(caller.campus) AND status = 'open' AND expires_at > now()
                AND rider_id <> \(caller.userId)
            RETURNING rider_id, version
            """
        ).first.map { (try $0.decode("rider_id"), try $0.decode("version")) }
    }

    /// What says why a ride of the campus was not accepted: its rider, its status, whether it expired.
    func acceptState(_ rideId: UUID, campus: String) throws -> (riderId: UUID, status: RideStatus, isExpired: Bool)? {
        try connection.query(
            """
            SELECT rider_id, status, expires_at <= now() AS expired FROM rides
            WHERE id = \(rideId) AND campus = \(campus)
            """
        ).first.map { (try $0.decode("rider_id"), try $0.decode("status"), try $0.decode("expired")) }
    }

    /// Sets a ride `cancelled` for `reason` with no more rounds of offers; returns its version.
    func setCancelled(_ rideId: UUID, reason: RideCancelReason) throws -> Int64 {
        try connection.query(
            """
            UPDATE rides SET status = 'cancelled', cancel_reason = \(reason.rawValue), finished_at = now(),
                next_offer_at = NULL, version = version + 1
            WHERE id = \(rideId)
            RETURNING version
            """
        ).first!.decode("version")
    }

    /// Counts a wrong code entered to start a ride (the ride is locked); nothing else of it changes.
    func countWrongCode(_ rideId: UUID) throws {
        try connection.query("UPDATE rides SET wrong_codes = wrong_codes + 1 WHERE id = \(rideId)")
    }

    /// Sets a ride `open` again without its driver, its match and its code, its rounds of offers from the first, and its end
    /// at least `lifetime` from now; returns its version and end.
    func reopen(_ rideId: UUID, lifetime: TimeInterval) throws -> (version: Int64, expiresAt: Date) {
        let row = try connection.query(
            """
            UPDATE rides SET status = 'open', driver_id = NULL, driver_name = NULL, car = NULL, seats = NULL,
                match_id = NULL, accepted_at = NULL, arrived_at = NULL, code = NULL, wrong_codes = 0, offer_round = 0,
                next_offer_at = NULL,
                expires_at = greatest(expires_at, now() + \(lifetime)::double precision * interval '1 second'),
                version = version + 1
            WHERE id = \(rideId)
            RETURNING version, expires_at
            """
        ).first!
        return (try row.decode("version"), try row.decode("expires_at"))
    }

    /// Sets a driver's step of a ride: its status and the step's time; returns its version.
    func setStatus(_ rideId: UUID, _ status: RideStatus, at step: RideStep) throws -> Int64 {
        let column =
            switch step {
            case .arrived: "arrived_at"
            case .started: "started_at"
            case .completed: "finished_at"
            }
        return try connection.query(
            """
            UPDATE rides SET status = \(status.rawValue), \(unescaped: column) = now(), version = version + 1
            WHERE id = \(rideId)
            RETURNING version
            """
        ).first!.decode("version")
    }

    /// Sets an open ride past its end `expired`, in one conditional UPDATE; its rider and version, or nil when it was
    /// not open or not yet at its end.
    func expireIfDue(_ rideId: UUID) throws -> (riderId: UUID, version: Int64)? {
        try connection.query(
            """
            UPDATE rides SET status = 'expired', finished_at = now(), next_offer_at = NULL, version = version + 1
            WHERE id = \(rideId) AND status = 'open' AND expires_at <= now()
            RETURNING rider_id, version
            """
        ).first.map { (try $0.decode("rider_id"), try $0.decode("version")) }
    }
}
