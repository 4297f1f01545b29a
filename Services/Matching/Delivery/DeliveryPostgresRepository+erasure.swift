import Contracts
import Foundation
import Postgres

/// What erasing a student who deleted their account reads and writes of the delivery flow's rows and events.
extension DeliveryPostgresRepository {
    /// A deliverer's open runs on any campus, locked.
    func lockOpenRuns(delivererId: UUID) throws -> [Run] {
        try runs(where: "r.deliverer_id = \(delivererId) AND r.status = 'open'", from: nil, lock: true)
    }

    /// A student's orders that still wait for a deliverer (waiting or offered), oldest first.
    func unmatchedOrderIds(ordererId: UUID) throws -> [UUID] {
        try connection.query(
            """
            SELECT id FROM orders WHERE orderer_id = \(ordererId) AND status IN ('waiting', 'offered')
            ORDER BY created_at
            """
        ).map { try $0.decode("id") }
    }

    /// Rewrites what the flow keeps of a student who deleted their account, in its rows and in the outbox events that
    /// `erase_person` cannot read (a name without the id beside it, the items they wrote): their name becomes
    /// `ErasedPerson.name`, their orders' items become empty, and their last position on a match goes. A second run
    /// changes nothing.
    func erase(_ userId: UUID) throws {
        let erased = ErasedPerson.name
        try connection.query(
            """
            UPDATE orders SET orderer_name = \(erased), items = ''
            WHERE orderer_id = \(userId) AND (orderer_name <> \(erased) OR items <> '')
            """)
        try connection.query(
            "UPDATE runs SET deliverer_name = \(erased) WHERE deliverer_id = \(userId) AND deliverer_name <> \(erased)")
        try connection.query(
            """
            UPDATE matches SET deliverer_lat = NULL, deliverer_lon = NULL, deliverer_position_at = NULL
            WHERE deliverer_id = \(userId) AND deliverer_lat IS NOT NULL
            """)
        try connection.query(
            """
            UPDATE outbox SET payload = payload || jsonb_build_object('items', '')
            WHERE type = \(OrderPlaced.type) AND (payload ->> 'ordererId')::uuid = \(userId)
            """)
        try connection.query(
            """
            UPDATE outbox SET payload = payload || jsonb_build_object('ordererName', \(erased)::text, 'items', '')
            WHERE type = \(OfferMade.type)
                AND (payload ->> 'orderId')::uuid IN (SELECT id FROM orders WHERE orderer_id = \(userId))
            """)
        try connection.query(
            """
            UPDATE outbox SET payload = payload || jsonb_build_object('delivererName', \(erased)::text)
            WHERE type = \(OrderTaken.type)
                AND (payload ->> 'matchId')::uuid IN (SELECT id FROM matches WHERE deliverer_id = \(userId))
            """)
    }
}
