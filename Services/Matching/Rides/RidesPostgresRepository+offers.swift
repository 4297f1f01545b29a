import Foundation
import MatchingCore
import Postgres

/// The offers of a request to drivers, round by round.
extension RidesPostgresRepository {
    /// Locks an open ride whose next round of offers is due; false when it is not open or a later round is due.
    func lockIfOfferDue(_ rideId: UUID) throws -> Bool {
        try !connection.query(
            """
            SELECT 1 AS due FROM rides WHERE id = \(rideId) AND status = 'open' AND next_offer_at <= now() FOR UPDATE
            """
        ).isEmpty
    }

    /// A ride locked for its next round of offers: its last round, status, campus and version.
    func lockForOffers(_ rideId: UUID) throws -> (lastRound: Int, status: RideStatus, campus: String, version: Int64)? {
        try connection.query(
            "SELECT offer_round, status, campus, version FROM rides WHERE id = \(rideId) FOR UPDATE"
        ).first.map {
            (try $0.decode("offer_round"), try $0.decode("status"), try $0.decode("campus"), try $0.decode("version"))
        }
    }

    /// The online drivers of the ride's campus within `radiusMeters` of its pickup, nearest first, at most `limit`,
    /// with their distance: never its rider, one in a block with its rider, a driver it was offered to, one with a ride
    /// under way, or one whose latest position is neither on the campus nor within its margin.
    func candidates(for rideId: UUID, radiusMeters: Double, limit: Int) throws -> [(driverId: UUID, distance: Double)] {
        // NB: drivers are found nearest first by the index; the distance told is the spheroid's, as lists give it.
        try connection.query(
            """
            SELECT p.driver_id, ST_Distance(p.location, r.pickup) AS distance
            FROM rides r JOIN ride_driver_positions p ON p.campus = r.campus
            WHERE r.id = \(rideId) AND p.driver_id <> r.rider_id AND \(isOnline) AND p.is_near_campus
                AND \(ReadModels.unblocked("p.driver_id", "r.rider_id"))
                AND ST_DWithin(p.location, r.pickup, \(radiusMeters)::double precision)
                AND NOT EXISTS (SELECT 1 FROM ride_offers o WHERE o.ride_id = r.id AND o.driver_id = p.driver_id)
                AND NOT EXISTS (
                    SELECT 1 FROM rides a
                    WHERE a.driver_id = p.driver_id AND a.status IN ('accepted', 'arrived', 'started'))
            ORDER BY p.location <-> r.pickup
            LIMIT \(limit)
            """
        ).map { (try $0.decode("driver_id"), try $0.decode("distance")) }
    }

    func insertOffer(_ rideId: UUID, driverId: UUID, round: Int, distanceMeters: Double) throws {
        try connection.query(
            """
            INSERT INTO ride_offers (ride_id, driver_id, round, distance_meters)
            VALUES (\(rideId), \(driverId), \(round), \(distanceMeters))
            """)
    }

    /// Records the last round of offers made and when the next is due (nil: none).
    func setOfferRound(_ rideId: UUID, _ number: Int, nextOfferAt: Date?) throws {
        try connection.query(
            "UPDATE rides SET offer_round = \(number), next_offer_at = \(nextOfferAt) WHERE id = \(rideId)")
    }

    /// Records that no round of offers is due.
    func clearNextOffer(_ rideId: UUID) throws {
        try connection.query("UPDATE rides SET next_offer_at = NULL WHERE id = \(rideId)")
    }

    /// The drivers a ride was offered to, in the order of their rounds.
    func offeredDrivers(_ rideId: UUID) throws -> [UUID] {
        try connection.query("SELECT driver_id FROM ride_offers WHERE ride_id = \(rideId) ORDER BY round")
            .map { try $0.decode("driver_id") }
    }

    /// Forgets a ride's offers but the one of `driverId`, which becomes round 0: a ride is never offered to them again.
    func resetOffers(_ rideId: UUID, keeping driverId: UUID) throws {
        try connection.query("DELETE FROM ride_offers WHERE ride_id = \(rideId) AND driver_id <> \(driverId)")
        try connection.query(
            """
            INSERT INTO ride_offers (ride_id, driver_id, round) VALUES (\(rideId), \(driverId), 0)
            ON CONFLICT (ride_id, driver_id) DO UPDATE SET round = 0
            """)
    }
}
