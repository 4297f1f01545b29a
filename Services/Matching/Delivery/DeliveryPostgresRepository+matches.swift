import Foundation
import MatchingCore
import Postgres

extension DeliveryPostgresRepository {
    /// Inserts an active match.
    func insertMatch(id: UUID, order: OrderState, delivererId: UUID, runId: UUID) throws {
        try connection.query(
            """
            INSERT INTO matches (id, order_id, run_id, campus, orderer_id, deliverer_id, status)
            VALUES (\(id), \(order.id), \(runId), \(order.campus), \(order.ordererId), \(delivererId), 'active')
            """)
    }

    func match(id: UUID) throws -> Match? {
        try match(id: id, lock: false)
    }

    func lockMatch(id: UUID) throws -> Match? {
        try match(id: id, lock: true)
    }

    /// The order's active match, locked.
    func lockActiveMatch(orderId: UUID) throws -> Match? {
        guard
            let id: UUID = try connection.query(
                "SELECT id FROM matches WHERE order_id = \(orderId) AND status = 'active'"
            ).first?.decode("id")
        else { return nil }
        return try lockMatch(id: id)
    }

    private func match(id: UUID, lock: Bool) throws -> Match? {
        try connection.query(
            """
            SELECT m.id, m.order_id, m.run_id, m.status, m.orderer_id, m.deliverer_id, m.orderer_completed,
                m.deliverer_completed, m.deliverer_position_at, m.deliverer_lat, m.deliverer_lon, o.items,
                coalesce(ou.name, o.orderer_name) AS orderer_name,
                coalesce(du.name, r.deliverer_name) AS deliverer_name,
                p.id AS r_id, p.name AS r_name, p.latitude AS r_latitude, p.longitude AS r_longitude,
                \(Self.orderDestination)
            FROM matches m JOIN orders o ON o.id = m.order_id JOIN runs r ON r.id = m.run_id
            JOIN places p ON p.id = r.restaurant_id
            LEFT JOIN users ou ON ou.id = m.orderer_id LEFT JOIN users du ON du.id = m.deliverer_id
            WHERE m.id = \(id)
            \(unescaped: lock ? "FOR UPDATE OF m" : "")
            """
        ).first.map(Match.init(row:))
    }

    /// Active matches of a student on a campus, on either side, oldest first.
    func activeMatchIds(memberId: UUID, campus: String) throws -> [UUID] {
        try connection.query(
            """
            SELECT id FROM matches
            WHERE (orderer_id = \(memberId) OR deliverer_id = \(memberId)) AND campus = \(campus)
                AND status = 'active'
            ORDER BY created_at
            """
        ).map { try $0.decode("id") }
    }

    /// Ends a match and forgets its deliverer's position; returns its new version.
    func endMatch(_ id: UUID, as status: MatchStatus) throws -> Int64 {
        try connection.query(
            """
            UPDATE matches SET status = \(status.rawValue), version = version + 1, deliverer_lat = NULL,
                deliverer_lon = NULL, deliverer_position_at = NULL
            WHERE id = \(id)
            RETURNING version
            """
        ).first!.decode("version")
    }

    /// Marks one side's completion: which sides have completed now.
    func markCompleted(matchId: UUID, by side: MatchSide) throws -> (orderer: Bool, deliverer: Bool) {
        let column: SQL = side == .orderer ? "orderer_completed" : "deliverer_completed"
        let row = try connection.query(
            """
            UPDATE matches SET \(column) = true, version = version + 1 WHERE id = \(matchId)
            RETURNING orderer_completed, deliverer_completed
            """
        ).first!
        return (try row.decode("orderer_completed"), try row.decode("deliverer_completed"))
    }

    /// Keeps the deliverer's latest position on a match, stamped with the database's time.
    func setPosition(_ point: GeoPoint, matchId: UUID) throws {
        try connection.query(
            """
            UPDATE matches SET deliverer_lat = \(point.lat)::double precision,
                deliverer_lon = \(point.lon)::double precision, deliverer_position_at = now()
            WHERE id = \(matchId)
            """)
    }
}
