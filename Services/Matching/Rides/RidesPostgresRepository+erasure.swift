import Contracts
import Foundation
import Postgres

/// What erasing a student who deleted their account reads and writes of the rides flow's rows and events.
extension RidesPostgresRepository {
    /// A rider's request that is not over yet, on any campus, locked.
    func lockUnfinishedRide(riderId: UUID) throws -> LockedRide? {
        try connection.query(
            """
            SELECT id, campus, rider_id, driver_id, match_id, status, code, wrong_codes, cancel_reason FROM rides
            WHERE rider_id = \(riderId) AND status IN ('open', 'accepted', 'arrived', 'started')
            FOR UPDATE
            """
        ).first.map(LockedRide.init)
    }

    /// Rewrites what the flow keeps of a student who deleted their account, in its rows and in the outbox events that
    /// `erase_person` cannot read (a name without the id beside it, the note they wrote, their car): their driver
    /// profile and last position go; the rides they rode or drove keep no name, note or car of theirs. A second run
    /// changes nothing.
    func erase(_ userId: UUID) throws {
        let erased = ErasedPerson.name
        try connection.query("DELETE FROM ride_driver_positions WHERE driver_id = \(userId)")
        try connection.query("DELETE FROM ride_drivers WHERE user_id = \(userId)")
        try connection.query(
            """
            UPDATE rides SET rider_name = \(erased), note = NULL
            WHERE rider_id = \(userId) AND (rider_name <> \(erased) OR note IS NOT NULL)
            """)
        try connection.query(
            """
            UPDATE rides SET driver_name = \(erased), car = ''
            WHERE driver_id = \(userId) AND (driver_name <> \(erased) OR car <> '')
            """)
        try connection.query(
            """
            UPDATE outbox SET payload = payload || jsonb_build_object('riderName', \(erased)::text, 'note', NULL)
            WHERE type = \(RideOffered.type)
                AND (payload ->> 'rideId')::uuid IN (SELECT id FROM rides WHERE rider_id = \(userId))
            """)
        try connection.query(
            """
            UPDATE outbox SET payload = jsonb_set(payload, '{driver}', payload -> 'driver'
                || jsonb_build_object('name', \(erased)::text, 'car', '', 'position', NULL))
            WHERE type = \(RideAccepted.type) AND (payload #>> '{driver,id}')::uuid = \(userId)
            """)
    }
}
