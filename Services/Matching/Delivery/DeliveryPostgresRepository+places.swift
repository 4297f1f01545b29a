import Foundation
import MatchingCore
import Postgres

extension DeliveryPostgresRepository {
    // MARK: Blocks

    /// The active matches between two students, either side, locked.
    func lockActiveMatches(between a: UUID, _ b: UUID) throws -> [Match] {
        try connection.query(
            """
            SELECT id FROM matches WHERE status = 'active'
              AND ((orderer_id = \(a) AND deliverer_id = \(b)) OR (orderer_id = \(b) AND deliverer_id = \(a)))
            ORDER BY created_at
            """
        ).compactMap { try lockMatch(id: try $0.decode("id")) }
    }

    /// The orders with a pending offer between two students, either side.
    func ordersOffered(between a: UUID, _ b: UUID) throws -> [UUID] {
        try connection.query(
            """
            SELECT o.id FROM offers f JOIN orders o ON o.id = f.order_id WHERE f.status = 'pending'
              AND ((o.orderer_id = \(a) AND f.deliverer_id = \(b)) OR (o.orderer_id = \(b) AND f.deliverer_id = \(a)))
            """
        ).map { try $0.decode("id") }
    }

    // MARK: Places

    /// The restaurants of a campus with open runs that have not closed yet, by name: how many, and their free seats.
    func restaurantsWithRuns(campus: String) throws -> [RestaurantWithRuns] {
        try connection.query(
            """
            SELECT p.id, p.name, p.latitude, p.longitude, count(*) AS runs, sum(r.capacity - r.held) AS seats
            FROM runs r JOIN places p ON p.id = r.restaurant_id
            WHERE r.campus = \(campus) AND r.status = 'open' AND r.closes_at > now()
            GROUP BY p.id, p.name, p.latitude, p.longitude ORDER BY p.name
            """
        ).map(RestaurantWithRuns.init(row:))
    }

    /// Whether `id` is a restaurant of the campus (retired or not): another campus's is as unknown as none.
    func isRestaurant(_ id: UUID, campus: String) throws -> Bool {
        try !connection.query(
            "SELECT 1 AS known FROM places WHERE id = \(id) AND campus = \(campus) AND kind = 'restaurant'"
        ).isEmpty
    }

    /// A live building of the campus, with its point.
    func building(_ id: UUID, campus: String) throws -> PlaceSummary? {
        try connection.query(
            """
            SELECT id, name, latitude, longitude FROM places
            WHERE id = \(id) AND campus = \(campus) AND kind = 'building' AND NOT is_retired
            """
        ).first.map { try PlaceSummary(row: $0, prefix: "") }
    }

    /// The campus's live building nearest `point`, within `meters` when given.
    func nearestBuilding(to point: GeoPoint, campus: String, within meters: Double?) throws -> (id: UUID, name: String)?
    {
        let distance: SQL = "ST_Distance(\(GeoPoint.geography(lat: "latitude", lon: "longitude")), \(point.geography))"
        let near: SQL = meters.map { "AND \(distance) <= \($0)" } ?? ""
        return try connection.query(
            """
            SELECT id, name FROM places
            WHERE campus = \(campus) AND kind = 'building' AND NOT is_retired \(near)
            ORDER BY \(distance) LIMIT 1
            """
        ).first.map { (try $0.decode("id"), try $0.decode("name")) }
    }

    /// Of `ids`, the live place nearest `point`; nil without a point or when none is live.
    func nearest(of ids: [UUID], to point: GeoPoint?) throws -> UUID? {
        guard let point else { return nil }
        let distance: SQL = "ST_Distance(\(GeoPoint.geography(lat: "latitude", lon: "longitude")), \(point.geography))"
        return try connection.query(
            """
            SELECT id FROM places WHERE id = ANY(\(ids.map(\.uuidString))::uuid[]) AND NOT is_retired
            ORDER BY \(distance) LIMIT 1
            """
        ).first?.decode("id")
    }
}
