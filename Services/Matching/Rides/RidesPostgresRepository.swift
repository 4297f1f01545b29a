import Contracts
import Foundation
import Logging
import MatchingCore
import Messaging
import Postgres
import ServiceKit

/// The rides flow's data in matching's database: the only file with its SQL. Accepting turns a ride from `open` to
/// `accepted` with a conditional UPDATE, and two unique partial indexes keep one unfinished request per rider and
/// one ride under way per driver, so that of any number of drivers on any number of replicas exactly one wins.
public struct RidesPostgresRepository: Sendable {
    let database: PostgresPool
    let settings: RideSettings
    let positions: PositionSender

    public init(database: PostgresPool, settings: RideSettings, positions: PositionSender = .discarding) {
        self.database = database
        self.settings = settings
        self.positions = positions
    }

    private func transaction<T: Sendable>(
        durable: Bool = true, _ body: @escaping @Sendable (RideStore) throws -> T
    ) async throws -> T {
        let settings = settings
        return try await database.transaction(durable: durable) { connection in
            try body(RideStore(connection: connection, settings: settings))
        }
    }

    // MARK: Drivers

    /// Creates or replaces the caller's driver profile.
    public func saveDriver(car: String, seats: Int, caller: Identity) async throws -> Driver {
        try await transaction { store in
            try store.connection.query(
                """
                INSERT INTO ride_drivers (user_id, campus, name, car, seats)
                VALUES (\(caller.userId), \(caller.campus), \(caller.name), \(car), \(seats))
                ON CONFLICT (user_id) DO UPDATE SET campus = excluded.campus, name = excluded.name, car = excluded.car,
                    seats = excluded.seats, version = ride_drivers.version + 1, updated_at = now()
                """)
            return try store.driver(caller.userId, campus: caller.campus)!
        }
    }

    /// The caller's driver profile, if they added one.
    public func driver(caller: Identity) async throws -> Driver? {
        try await transaction { try $0.driver(caller.userId, campus: caller.campus) }
    }

    /// The caller's latest position: they are online until it is older than the online window. 409 without a profile.
    /// While they drive a ride, it also goes to its rider, at most once a second (the latest always). Not `durable`:
    /// every driver sends one every few seconds, and the next replaces it.
    public func reportPosition(_ point: GeoPoint, caller: Identity) async throws -> Driver {
        let (driver, frame) = try await transaction(durable: false) { try $0.reportPosition(point, caller: caller) }
        // NB: sent once committed, so that a frame never shows a position the ride does not.
        if let frame, let rideId = frame.payload.rideId {
            positions.send(frame.payload, to: frame.receiver)
            await PositionPacing.markSent(table: "rides", id: rideId, in: database)
        }
        return driver
    }

    /// The caller goes offline: their position is forgotten. 404 without a profile.
    public func goOffline(caller: Identity) async throws -> Driver {
        try await transaction { store in
            guard try store.driver(caller.userId, campus: caller.campus) != nil else {
                throw MatchingError.notFound("driver profile; create one with PUT /v1/rides/driver")
            }
            try store.connection.query("DELETE FROM ride_driver_positions WHERE driver_id = \(caller.userId)")
            return try store.driver(caller.userId, campus: caller.campus)!
        }
    }

    // MARK: Requests

    /// The caller asks for a ride; a retry with the same client `id` returns the first request. It is offered at once
    /// to the nearest online drivers.
    public func requestRide(id: UUID?, _ draft: RideDraft, caller: Identity) async throws -> Ride {
        try await transaction { store in
            let rideId = id ?? UUID()
            if let existing = try store.riderOf(rideId) {
                guard existing == caller.userId else { throw MatchingError.conflict("That id is taken.") }
                return try store.ride(rideId, visibleTo: caller)!
            }
            let connection = store.connection
            let pickup = try ReadModels.location(
                of: draft.pickup, campus: caller.campus, what: "pickup place", on: connection)
            let dropoff = try draft.dropoff.map {
                try ReadModels.location(of: $0, campus: caller.campus, what: "dropoff place", on: connection)
            }
            try store.refuseSecondRequest(of: caller)
            let dropoffPoint: SQL = dropoff.map(\.point.geography) ?? "NULL"
            let expiresAt = Date().addingTimeInterval(store.settings.rideLifetime)
            let inserted: PostgresRows
            do {
                inserted = try connection.query(
                    """
                    INSERT INTO rides (id, campus, rider_id, rider_name, pickup, pickup_place_id, dropoff,
                        dropoff_place_id, note, status, expires_at)
                    VALUES (\(rideId), \(caller.campus), \(caller.userId), \(caller.name), \(pickup.point.geography),
                        \(pickup.placeId)::uuid, \(dropoffPoint), \(dropoff?.placeId)::uuid, \(draft.note), 'open',
                        \(expiresAt))
                    ON CONFLICT (id) DO NOTHING
                    RETURNING id
                    """)
            } catch let error as PostgresError where error.isUniqueViolation {
                throw RideStore.secondRequest
            }
            // A retry racing its first attempt: the first one's request is the answer.
            guard !inserted.isEmpty else {
                guard try store.riderOf(rideId) == caller.userId else {
                    throw MatchingError.conflict("That id is taken.")
                }
                return try store.ride(rideId, visibleTo: caller)!
            }
            try store.addTimer(.expiry, rideId, due: expiresAt)
            try store.offerNextRound(rideId)
            return try store.ride(rideId, visibleTo: caller)!
        }
    }

    /// A ride, to its rider and to its driver; anyone else gets nil.
    public func ride(_ id: UUID, caller: Identity) async throws -> Ride? {
        try await transaction { try $0.ride(id, visibleTo: caller) }
    }

    /// The ride the caller asked for, or drives, that is not over: at most one of each, and a rider's first (a driver
    /// who has asked for a ride too is still a rider first). Nil when there is none.
    public func currentRide(caller: Identity) async throws -> Ride? {
        try await transaction { store in
            let current = try store.connection.query(
                """
                SELECT id FROM rides
                WHERE campus = \(caller.campus) AND (
                    (rider_id = \(caller.userId) AND status IN ('open', 'accepted', 'arrived', 'started'))
                    OR (driver_id = \(caller.userId) AND status IN ('accepted', 'arrived', 'started')))
                ORDER BY rider_id = \(caller.userId) DESC
                LIMIT 1
                """
            ).first
            return try current.flatMap { try store.ride(try $0.decode("id"), visibleTo: caller) }
        }
    }

    /// Open requests of the caller's campus within `radiusMeters` of `point`, nearest first, never the caller's own.
    /// 409 for a caller without a driver profile.
    public func openRequests(near point: GeoPoint, radiusMeters: Double, limit: Int, caller: Identity) async throws
        -> RideRequestList
    {
        try await transaction { store in
            _ = try store.requireDriver(caller)
            // NB: the nearest are found by walking the spatial index in distance order (`<->`, on the sphere) within a
            // box around the circle, so that a circle with thousands of requests costs the few read, not a distance
            // for each (and ST_DWithin, which costs milliseconds a query, is not needed). Only they are joined to
            // names and positions: the planner expects about one request in the circle, and would join hundreds by
            // nested loops. They are then kept and sorted by the exact distance. The sphere is within 0.5 % of it: the
            // walk reaches that much past the circle, and of two requests at the very end of a full list, either may
            // be the one kept.
            let here = point.geography
            let rows = try store.connection.query(
                """
                SELECT \(RideStore.rideColumns), r.distance
                FROM (
                    SELECT rides.*, ST_Distance(pickup, \(here)) AS distance FROM rides
                    WHERE campus = \(caller.campus) AND status = 'open' AND expires_at > now()
                        AND rider_id <> \(caller.userId) AND pickup && \(point.box(meters: radiusMeters))
                        AND pickup <-> \(here) <= \(radiusMeters * 1.005)::double precision
                    ORDER BY pickup <-> \(here)
                    LIMIT \(limit)
                ) r \(RideStore.rideJoins)
                WHERE r.distance <= \(radiusMeters)::double precision
                ORDER BY r.distance, r.id
                """)
            return RideRequestList(
                requests: try rows.map { row in
                    let ride = try RideStore.ride(row)
                    return RideRequest(
                        id: ride.id, riderName: ride.riderName, pickup: ride.pickup, dropoff: ride.dropoff,
                        note: ride.note, distanceMeters: try row.decode("distance"), expiresAt: ride.expiresAt,
                        createdAt: ride.createdAt)
                })
        }
    }

    // MARK: Rides

    /// A driver takes an open request: the first wins, everyone after gets 409 (a retry of the winner gets its ride
    /// again); a driver with a ride under way, or the rider themselves, 409 too. The rider is told, the chat opens.
    public func accept(_ rideId: UUID, caller: Identity) async throws -> Ride {
        do {
            return try await transaction { try $0.accept(rideId, caller: caller) }
        } catch let error as PostgresError where error.isUniqueViolation {
            // Two rides accepted at once by one driver: the index keeps the first.
            throw RideStore.secondRideUnderway
        }
    }

    /// The rider calls the ride off (its driver, or the drivers it was offered to, are told), or the driver gives it
    /// up (it is open again and offered anew; the rider is told). Either, only before the ride has started.
    public func cancel(_ rideId: UUID, caller: Identity) async throws -> Ride {
        try await transaction { try $0.cancel(rideId, caller: caller) }
    }

    /// The driver marks the ride arrived, started or completed, in that order (409 otherwise); the rider is told.
    public func mark(_ rideId: UUID, _ step: RideStep, caller: Identity) async throws -> Ride {
        try await transaction { try $0.mark(rideId, step, caller: caller) }
    }
}

/// The flow's steps on one connection inside an open transaction.
struct RideStore {
    let connection: PostgresConnection
    let settings: RideSettings

    static let secondRequest = MatchingError.conflict(
        "You already have a ride request open or under way; cancel it before asking for another.")
    static let secondRideUnderway = MatchingError.conflict(
        "You already have a ride under way; complete or cancel it before accepting another.")
    static let noDriverProfile = MatchingError.conflict("Add a driver profile first with PUT /v1/rides/driver.")

    /// Whether a position reported at `reported_at` (of `ride_driver_positions p`) keeps its driver online.
    var isOnline: SQL {
        "p.reported_at > now() - \(settings.onlineWindow)::double precision * interval '1 second'"
    }

    // MARK: Drivers

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

    /// The caller's driver profile, or 409 naming how to add one.
    func requireDriver(_ caller: Identity) throws -> Driver {
        guard let driver = try driver(caller.userId, campus: caller.campus) else { throw Self.noDriverProfile }
        return driver
    }

    // MARK: Rides

    func riderOf(_ rideId: UUID) throws -> UUID? {
        try connection.query("SELECT rider_id FROM rides WHERE id = \(rideId)").first?.decode("rider_id")
    }

    /// 409 when the rider already has a request that is not over.
    func refuseSecondRequest(of caller: Identity) throws {
        let unfinished = try connection.query(
            """
            SELECT 1 AS unfinished FROM rides
            WHERE rider_id = \(caller.userId) AND status IN ('open', 'accepted', 'arrived', 'started')
            """)
        guard unfinished.isEmpty else { throw Self.secondRequest }
    }

    /// 409 when the driver already holds a ride under way.
    func refuseSecondRide(of caller: Identity) throws {
        let underway = try connection.query(
            """
            SELECT 1 AS underway FROM rides
            WHERE driver_id = \(caller.userId) AND status IN ('accepted', 'arrived', 'started')
            """)
        guard underway.isEmpty else { throw Self.secondRideUnderway }
    }

    /// The columns of a ride over `rideJoins`; the driver's position only while the ride is under way.
    static let rideColumns: SQL = """
        r.id, r.rider_id, coalesce(ur.name, r.rider_name) AS rider_name,
            ST_Y(r.pickup::geometry) AS pickup_lat, ST_X(r.pickup::geometry) AS pickup_lon, r.pickup_place_id,
            pp.name AS pickup_name, ST_Y(r.dropoff::geometry) AS dropoff_lat, ST_X(r.dropoff::geometry) AS dropoff_lon,
            r.dropoff_place_id, dp.name AS dropoff_name, r.note, r.status, r.driver_id,
            coalesce(ud.name, r.driver_name) AS driver_name, r.car, r.seats, r.match_id,
            ST_Y(pos.location::geometry) AS position_lat, ST_X(pos.location::geometry) AS position_lon,
            pos.reported_at AS position_at, r.expires_at, r.created_at, r.accepted_at, r.arrived_at, r.started_at,
            r.finished_at
        """

    static let rideJoins: SQL = """
        LEFT JOIN users ur ON ur.id = r.rider_id LEFT JOIN users ud ON ud.id = r.driver_id
        LEFT JOIN places pp ON pp.id = r.pickup_place_id LEFT JOIN places dp ON dp.id = r.dropoff_place_id
        LEFT JOIN ride_driver_positions pos
            ON pos.driver_id = r.driver_id AND r.status IN ('accepted', 'arrived', 'started')
        """

    static func ride(_ row: PostgresRow) throws -> Ride {
        let dropoffLat: Double? = try row.decode("dropoff_lat")
        let driverId: UUID? = try row.decode("driver_id")
        let positionAt: Date? = try row.decode("position_at")
        let position = try positionAt.map {
            LivePosition(lat: try row.decode("position_lat"), lon: try row.decode("position_lon"), at: $0)
        }
        return Ride(
            id: try row.decode("id"), riderId: try row.decode("rider_id"), riderName: try row.decode("rider_name"),
            pickup: RideSpot(
                lat: try row.decode("pickup_lat"), lon: try row.decode("pickup_lon"),
                placeId: try row.decode("pickup_place_id"), name: try row.decode("pickup_name")),
            dropoff: try dropoffLat.map {
                RideSpot(
                    lat: $0, lon: try row.decode("dropoff_lon"), placeId: try row.decode("dropoff_place_id"),
                    name: try row.decode("dropoff_name"))
            },
            note: try row.decode("note"), status: try row.decode("status"),
            driver: try driverId.map {
                RideDriver(
                    id: $0, name: try row.decode("driver_name"), car: try row.decode("car"),
                    seats: try row.decode("seats"), position: position)
            },
            matchId: try row.decode("match_id"), expiresAt: try row.decode("expires_at"),
            createdAt: try row.decode("created_at"), acceptedAt: try row.decode("accepted_at"),
            arrivedAt: try row.decode("arrived_at"), startedAt: try row.decode("started_at"),
            finishedAt: try row.decode("finished_at"))
    }

    /// A ride whoever asks, for the flow's own steps.
    func ride(_ id: UUID) throws -> Ride? {
        try connection.query("SELECT \(Self.rideColumns) FROM rides r \(Self.rideJoins) WHERE r.id = \(id)")
            .first.map(Self.ride)
    }

    /// A ride of the caller's campus of which they are the rider or the driver.
    func ride(_ id: UUID, visibleTo caller: Identity) throws -> Ride? {
        try connection.query(
            """
            SELECT \(Self.rideColumns) FROM rides r \(Self.rideJoins)
            WHERE r.id = \(id) AND r.campus = \(caller.campus)
                AND \(caller.userId)::uuid IN (r.rider_id, r.driver_id)
            """
        ).first.map(Self.ride)
    }

    /// What cancelling and marking need of a ride the caller is party to, locked.
    struct RideState {
        var id: UUID
        var campus: String
        var riderId: UUID
        var driverId: UUID?
        var matchId: UUID?
        var status: RideStatus
    }

    func lockRide(_ id: UUID, partyTo caller: Identity) throws -> RideState? {
        try connection.query(
            """
            SELECT id, campus, rider_id, driver_id, match_id, status FROM rides
            WHERE id = \(id) AND campus = \(caller.campus) AND \(caller.userId)::uuid IN (rider_id, driver_id)
            FOR UPDATE
            """
        ).first.map { row in
            RideState(
                id: try row.decode("id"), campus: try row.decode("campus"), riderId: try row.decode("rider_id"),
                driverId: try row.decode("driver_id"), matchId: try row.decode("match_id"),
                status: try row.decode("status"))
        }
    }

    /// The match of a ride's rider and driver, for its chat; closing needs only the members' ids.
    static func match(_ matchId: UUID, campus: String, rider: MatchMember, driver: MatchMember, subject: String)
        -> FlowMatch
    {
        FlowMatch(id: matchId, flow: RidesFlow.name, campus: campus, members: [rider, driver], subject: subject)
    }

    // MARK: Offers

    /// Offers an open ride to the next nearest online drivers not offered it yet, as many and as far as its next
    /// round allows, and schedules the round after, while there is one.
    func offerNextRound(_ rideId: UUID) throws {
        guard
            let state = try connection.query(
                "SELECT offer_round, status, campus, version FROM rides WHERE id = \(rideId) FOR UPDATE"
            ).first,
            try state.decode("status", as: RideStatus.self) == .open,
            let ride = try ride(rideId)
        else { return }
        let number = try state.decode("offer_round", as: Int.self) + 1
        guard let round = RideRules.offerRound(number, settings: settings) else {
            try connection.query("UPDATE rides SET next_offer_at = NULL WHERE id = \(rideId)")
            return
        }
        let version: Int64 = try state.decode("version")
        // NB: drivers are found nearest first by the index; the distance told is the spheroid's, as lists give it.
        let drivers = try connection.query(
            """
            SELECT p.driver_id, ST_Distance(p.location, r.pickup) AS distance
            FROM rides r JOIN ride_driver_positions p ON p.campus = r.campus
            WHERE r.id = \(rideId) AND p.driver_id <> r.rider_id AND \(isOnline)
                AND ST_DWithin(p.location, r.pickup, \(round.radiusMeters)::double precision)
                AND NOT EXISTS (SELECT 1 FROM ride_offers o WHERE o.ride_id = r.id AND o.driver_id = p.driver_id)
                AND NOT EXISTS (
                    SELECT 1 FROM rides a
                    WHERE a.driver_id = p.driver_id AND a.status IN ('accepted', 'arrived', 'started'))
            ORDER BY p.location <-> r.pickup
            LIMIT \(round.count)
            """)
        for row in drivers {
            let driverId: UUID = try row.decode("driver_id")
            let distance: Double = try row.decode("distance")
            try connection.query(
                """
                INSERT INTO ride_offers (ride_id, driver_id, round, distance_meters)
                VALUES (\(rideId), \(driverId), \(number), \(distance))
                """)
            try Outbox.append(
                RideOffered(
                    rideId: rideId, campus: try state.decode("campus"),
                    riderName: ride.riderName, pickup: ride.pickup, dropoff: ride.dropoff, note: ride.note,
                    driverId: driverId, distanceMeters: distance, expiresAt: ride.expiresAt, version: version),
                on: connection)
        }
        let isLastRound = RideRules.offerRound(number + 1, settings: settings) == nil
        let due = Date().addingTimeInterval(settings.offerWindow)
        try connection.query(
            """
            UPDATE rides SET offer_round = \(number), next_offer_at = \(isLastRound ? nil : due)
            WHERE id = \(rideId)
            """)
        if !isLastRound { try addTimer(.offer, rideId, due: due) }
    }

    // MARK: Accepting, cancelling, marking

    func accept(_ rideId: UUID, caller: Identity) throws -> Ride {
        let isOfCampus = try !connection.query(
            "SELECT 1 AS known FROM rides WHERE id = \(rideId) AND campus = \(caller.campus)"
        ).isEmpty
        guard isOfCampus else { throw MatchingError.notFound("ride") }
        let driver = try requireDriver(caller)
        if let ride = try ride(rideId, visibleTo: caller), ride.driver?.id == caller.userId, ride.status.isUnderway {
            return ride
        }
        try refuseSecondRide(of: caller)
        let matchId = UUID()
        guard
            let row = try connection.query(
                """
                UPDATE rides SET status = 'accepted', driver_id = \(caller.userId), driver_name = \(driver.name),
                    car = \(driver.car), seats = \(driver.seats), match_id = \(matchId), accepted_at = now(),
                    next_offer_at = NULL, version = version + 1
                WHERE id = \(rideId) AND campus = \(caller.campus) AND status = 'open' AND expires_at > now()
                    AND rider_id <> \(caller.userId)
                RETURNING rider_id, version
                """
            ).first
        else { throw try refusalToAccept(rideId, caller: caller) }
        let ride = try ride(rideId, visibleTo: caller)!
        let riderId: UUID = try row.decode("rider_id")
        let version: Int64 = try row.decode("version")
        let position = driver.isOnline ? driver.position : nil
        try Outbox.append(
            RideAccepted(
                rideId: rideId, matchId: matchId, campus: caller.campus, riderId: riderId,
                driver: RideDriver(
                    id: caller.userId, name: driver.name, car: driver.car, seats: driver.seats, position: position),
                version: version),
            on: connection)
        try Self.match(
            matchId, campus: caller.campus,
            rider: MatchMember(userId: riderId, name: ride.riderName, role: "rider"),
            driver: MatchMember(userId: caller.userId, name: driver.name, role: "driver"),
            subject: RideRules.subject(pickup: ride.pickup.name, dropoff: ride.dropoff?.name)
        ).announceOpened(on: connection)
        return ride
    }

    /// Why the caller cannot accept a ride: it is not of their campus (404), it is their own, or it is not open.
    func refusalToAccept(_ rideId: UUID, caller: Identity) throws -> MatchingError {
        guard
            let row = try connection.query(
                """
                SELECT rider_id, status, expires_at <= now() AS expired FROM rides
                WHERE id = \(rideId) AND campus = \(caller.campus)
                """
            ).first
        else { return .notFound("ride") }
        if try row.decode("rider_id", as: UUID.self) == caller.userId {
            return .conflict("You cannot accept your own ride request.")
        }
        switch try row.decode("status", as: RideStatus.self) {
        case .open where try row.decode("expired", as: Bool.self): return .conflict("This ride request has expired.")
        case .open: return .conflict("This ride request is no longer open.")
        case .accepted, .arrived, .started, .completed: return .conflict("Another driver accepted this ride first.")
        case .cancelled, .expired: return .conflict("This ride request is no longer open.")
        }
    }

    func cancel(_ rideId: UUID, caller: Identity) throws -> Ride {
        guard let state = try lockRide(rideId, partyTo: caller) else { throw MatchingError.notFound("ride") }
        guard state.status.isCancellable else {
            throw MatchingError.conflict("This ride is \(state.status.rawValue); it can no longer be cancelled.")
        }
        let rider = MatchMember(userId: state.riderId, name: "", role: "rider")
        if state.riderId == caller.userId {
            let version: Int64 = try connection.query(
                """
                UPDATE rides SET status = 'cancelled', finished_at = now(), next_offer_at = NULL, version = version + 1
                WHERE id = \(rideId)
                RETURNING version
                """
            ).first!.decode("version")
            let recipients: [UUID] =
                if let driverId = state.driverId {
                    [driverId]
                } else {
                    try connection.query("SELECT driver_id FROM ride_offers WHERE ride_id = \(rideId) ORDER BY round")
                        .map { try $0.decode("driver_id") }
                }
            try Outbox.append(
                RideCancelled(rideId: rideId, cancelledBy: caller.userId, recipients: recipients, version: version),
                on: connection)
            if let driverId = state.driverId, let matchId = state.matchId {
                try Self.match(
                    matchId, campus: state.campus, rider: rider,
                    driver: MatchMember(userId: driverId, name: "", role: "driver"), subject: ""
                ).announceClosed(.cancelled, version: version, on: connection)
            }
            return try ride(rideId, visibleTo: caller)!
        }
        // The driver gives the ride up: it is open again for a full lifetime, offered anew to everyone but them.
        let reopened = try connection.query(
            """
            UPDATE rides SET status = 'open', driver_id = NULL, driver_name = NULL, car = NULL, seats = NULL,
                match_id = NULL, accepted_at = NULL, arrived_at = NULL, offer_round = 0, next_offer_at = NULL,
                expires_at = greatest(
                    expires_at, now() + \(settings.rideLifetime)::double precision * interval '1 second'),
                version = version + 1
            WHERE id = \(rideId)
            RETURNING version, expires_at
            """
        ).first!
        let version: Int64 = try reopened.decode("version")
        let expiresAt: Date = try reopened.decode("expires_at")
        try connection.query("DELETE FROM ride_offers WHERE ride_id = \(rideId) AND driver_id <> \(caller.userId)")
        try connection.query(
            """
            INSERT INTO ride_offers (ride_id, driver_id, round) VALUES (\(rideId), \(caller.userId), 0)
            ON CONFLICT (ride_id, driver_id) DO UPDATE SET round = 0
            """)
        try addTimer(.expiry, rideId, due: expiresAt)
        try Outbox.append(
            RideReopened(
                rideId: rideId, driverId: caller.userId, riderId: state.riderId, expiresAt: expiresAt,
                version: version),
            on: connection)
        if let matchId = state.matchId {
            try Self.match(
                matchId, campus: state.campus, rider: rider,
                driver: MatchMember(userId: caller.userId, name: "", role: "driver"), subject: ""
            ).announceClosed(.cancelled, version: version, on: connection)
        }
        try offerNextRound(rideId)
        return try ride(rideId)!
    }

    func mark(_ rideId: UUID, _ step: RideStep, caller: Identity) throws -> Ride {
        guard let state = try lockRide(rideId, partyTo: caller) else { throw MatchingError.notFound("ride") }
        guard let driverId = state.driverId, driverId == caller.userId else {
            throw MatchingError.conflict("Only the ride's driver marks it \(step.rawValue).")
        }
        let status = try RideRules.status(after: step, from: state.status)
        let column =
            switch step {
            case .arrived: "arrived_at"
            case .started: "started_at"
            case .completed: "finished_at"
            }
        let version: Int64 = try connection.query(
            """
            UPDATE rides SET status = \(status.rawValue), \(unescaped: column) = now(), version = version + 1
            WHERE id = \(rideId)
            RETURNING version
            """
        ).first!.decode("version")
        switch step {
        case .arrived:
            try Outbox.append(
                RideArrived(rideId: rideId, driverId: driverId, riderId: state.riderId, version: version),
                on: connection)
        case .started:
            try Outbox.append(
                RideStarted(rideId: rideId, driverId: driverId, riderId: state.riderId, version: version),
                on: connection)
        case .completed:
            try Outbox.append(
                RideCompleted(rideId: rideId, driverId: driverId, riderId: state.riderId, version: version),
                on: connection)
            if let matchId = state.matchId {
                try Self.match(
                    matchId, campus: state.campus, rider: MatchMember(userId: state.riderId, name: "", role: "rider"),
                    driver: MatchMember(userId: driverId, name: "", role: "driver"), subject: ""
                ).announceClosed(.completed, version: version, on: connection)
            }
        }
        return try ride(rideId, visibleTo: caller)!
    }

    // MARK: Live positions

    /// Keeps the caller's latest position and paces it to the rider of their ride under way: the driver, and the frame
    /// to send once committed (nil when they drive none or the position waits for the ride's position timer).
    /// NB: one statement checks the profile, writes the position and locks the ride under way: hundreds of drivers
    /// send one a second, and each round trip holds a connection.
    func reportPosition(_ point: GeoPoint, caller: Identity) throws -> (Driver, PendingFrame?) {
        guard
            let row = try connection.query(
                """
                WITH driver AS (
                    SELECT d.user_id, coalesce(u.name, d.name) AS name, d.car, d.seats, d.updated_at
                    FROM ride_drivers d LEFT JOIN users u ON u.id = d.user_id
                    WHERE d.user_id = \(caller.userId) AND d.campus = \(caller.campus)
                ), position AS (
                    INSERT INTO ride_driver_positions (driver_id, campus, location, reported_at)
                    SELECT user_id, \(caller.campus), \(point.geography), now() FROM driver
                    ON CONFLICT (driver_id) DO UPDATE SET campus = excluded.campus, location = excluded.location,
                        reported_at = excluded.reported_at
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
            ).first
        else { throw Self.noDriverProfile }
        let position = LivePosition(
            lat: try row.decode("lat"), lon: try row.decode("lon"), at: try row.decode("reported_at"))
        let driver = Driver(
            userId: try row.decode("user_id"), name: try row.decode("name"), car: try row.decode("car"),
            seats: try row.decode("seats"), isOnline: true, position: position, updatedAt: try row.decode("updated_at"))
        guard let rideId: UUID = try row.decode("ride_id"),
            try PositionPacing.record(
                table: "rides", id: rideId, flow: RidesFlow.name, lastSentAt: try row.decode("position_sent_at"),
                isPending: try row.decode("position_pending"), now: try row.decode("now"), on: connection)
        else { return (driver, nil) }
        return (driver, PendingFrame(.init(rideId: rideId, position: position), to: try row.decode("rider_id")))
    }

    /// The latest position of a ride's driver, as a frame to its rider, while the ride is under way.
    func latestPositionFrame(_ rideId: UUID) throws -> PendingFrame? {
        guard let ride = try ride(rideId), ride.status.isUnderway, let position = ride.driver?.position else {
            return nil
        }
        return PendingFrame(
            .init(rideId: rideId, position: LivePosition(lat: position.lat, lon: position.lon, at: position.at)),
            to: ride.riderId)
    }

    // MARK: Timers

    /// `position` is `PositionPacing.timerKind`.
    enum TimerKind: String, CaseIterable { case offer, expiry, position }

    func addTimer(_ kind: TimerKind, _ target: UUID, due: Date) throws {
        try Timers.add(flow: RidesFlow.name, kind: kind.rawValue, target: target, due: due, on: connection)
    }

    /// Does what a timer is due for; a position timer answers the frame to send.
    func timerIsDue(_ kind: TimerKind, _ target: UUID) throws -> PendingFrame? {
        switch kind {
        case .offer: try offerRoundIsDue(target)
        case .expiry: try expire(target)
        case .position:
            return try PositionPacing.takePending(table: "rides", id: target, flow: RidesFlow.name, on: connection) {
                try latestPositionFrame(target)
            }
        }
        return nil
    }

    /// The next round, unless someone accepted, the request ended, or a reopening started the rounds again (a timer
    /// of a round that no longer counts finds `next_offer_at` later than itself).
    private func offerRoundIsDue(_ rideId: UUID) throws {
        let due = try connection.query(
            """
            SELECT 1 AS due FROM rides WHERE id = \(rideId) AND status = 'open' AND next_offer_at <= now() FOR UPDATE
            """)
        guard !due.isEmpty else { return }
        try offerNextRound(rideId)
    }

    private func expire(_ rideId: UUID) throws {
        guard
            let row = try connection.query(
                """
                UPDATE rides SET status = 'expired', finished_at = now(), next_offer_at = NULL, version = version + 1
                WHERE id = \(rideId) AND status = 'open' AND expires_at <= now()
                RETURNING rider_id, version
                """
            ).first
        else { return }
        try Outbox.append(
            RideExpired(rideId: rideId, riderId: try row.decode("rider_id"), version: try row.decode("version")),
            on: connection)
    }
}

extension RideStatus: PostgresDecodable {
    public init?(postgresText: String) {
        self.init(rawValue: postgresText)
    }
}
