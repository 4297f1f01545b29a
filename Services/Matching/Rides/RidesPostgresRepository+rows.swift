import Contracts
import Foundation
import MatchingCore
import Postgres

extension RideStatus: PostgresDecodable {
    public init?(postgresText: String) {
        self.init(rawValue: postgresText)
    }
}

extension RideCancelReason: PostgresDecodable {
    public init?(postgresText: String) {
        self.init(rawValue: postgresText)
    }
}

/// What cancelling and marking need of a ride the caller is party to, locked.
struct LockedRide {
    var id: UUID
    var campus: String
    var riderId: UUID
    var driverId: UUID?
    var matchId: UUID?
    var status: RideStatus
    /// The code that starts the ride, and the wrong ones entered since it was drawn.
    var code: String?
    var wrongCodes: Int
    var cancelReason: RideCancelReason?

    init(_ row: PostgresRow) throws {
        id = try row.decode("id")
        campus = try row.decode("campus")
        riderId = try row.decode("rider_id")
        driverId = try row.decode("driver_id")
        matchId = try row.decode("match_id")
        status = try row.decode("status")
        code = try row.decode("code")
        wrongCodes = try row.decode("wrong_codes")
        cancelReason = try row.decode("cancel_reason")
    }
}

/// A driver's position as kept, with the ride under way they drive, locked, and the pace of its frames.
struct SavedPosition {
    /// The ride under way and where its frames to the rider are (`PositionPacing`).
    struct PacedRide {
        var id: UUID
        var riderId: UUID
        var lastSentAt: Date?
        var isPending: Bool
    }

    var driver: Driver
    var position: LivePosition
    var ride: PacedRide?
    /// The database's clock once the ride was locked.
    var now: Date

    init(_ row: PostgresRow) throws {
        position = LivePosition(
            lat: try row.decode("lat"), lon: try row.decode("lon"), at: try row.decode("reported_at"))
        driver = Driver(
            userId: try row.decode("user_id"), name: try row.decode("name"), car: try row.decode("car"),
            seats: try row.decode("seats"), isOnline: true, position: position, updatedAt: try row.decode("updated_at"))
        ride = try row.decode("ride_id", as: UUID?.self).map { id in
            PacedRide(
                id: id, riderId: try row.decode("rider_id"), lastSentAt: try row.decode("position_sent_at"),
                isPending: try row.decode("position_pending"))
        }
        now = try row.decode("now")
    }
}

extension RidesPostgresRepository {
    /// The columns of a ride over `rideJoins`; the driver's position only while the ride is under way.
    static let rideColumns: SQL = """
        r.id, r.rider_id, coalesce(ur.name, r.rider_name) AS rider_name,
            ST_Y(r.pickup::geometry) AS pickup_lat, ST_X(r.pickup::geometry) AS pickup_lon, r.pickup_place_id,
            pp.name AS pickup_name, ST_Y(r.dropoff::geometry) AS dropoff_lat, ST_X(r.dropoff::geometry) AS dropoff_lon,
            r.dropoff_place_id, dp.name AS dropoff_name, r.note, r.status, r.driver_id,
            coalesce(ud.name, r.driver_name) AS driver_name, r.car, r.seats, r.match_id,
            ST_Y(pos.location::geometry) AS position_lat, ST_X(pos.location::geometry) AS position_lon,
            pos.reported_at AS position_at, r.expires_at, r.created_at, r.accepted_at, r.arrived_at, r.started_at,
            r.finished_at, r.code, r.cancel_reason
        """

    static let rideJoins: SQL = """
        LEFT JOIN users ur ON ur.id = r.rider_id LEFT JOIN users ud ON ud.id = r.driver_id
        LEFT JOIN places pp ON pp.id = r.pickup_place_id LEFT JOIN places dp ON dp.id = r.dropoff_place_id
        LEFT JOIN ride_driver_positions pos
            ON pos.driver_id = r.driver_id AND r.status IN ('accepted', 'arrived', 'started')
        """

    /// A ride from `rideColumns`, with its code only when `viewer` is its rider: never to its driver, nor to anyone
    /// when nobody is named.
    static func ride(_ row: PostgresRow, shownTo viewer: UUID? = nil) throws -> Ride {
        let riderId: UUID = try row.decode("rider_id")
        let dropoffLat: Double? = try row.decode("dropoff_lat")
        let driverId: UUID? = try row.decode("driver_id")
        let positionAt: Date? = try row.decode("position_at")
        let position = try positionAt.map {
            LivePosition(lat: try row.decode("position_lat"), lon: try row.decode("position_lon"), at: $0)
        }
        return Ride(
            id: try row.decode("id"), riderId: riderId, riderName: try row.decode("rider_name"),
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
            finishedAt: try row.decode("finished_at"), code: viewer == riderId ? try row.decode("code") : nil,
            cancelReason: try row.decode("cancel_reason"))
    }

    /// An open request from `rideColumns` and its `distance`.
    static func rideRequest(_ row: PostgresRow) throws -> RideRequest {
        let ride = try ride(row)
        return RideRequest(
            id: ride.id, riderName: ride.riderName, pickup: ride.pickup, dropoff: ride.dropoff, note: ride.note,
            distanceMeters: try row.decode("distance"), expiresAt: ride.expiresAt, createdAt: ride.createdAt)
    }
}
