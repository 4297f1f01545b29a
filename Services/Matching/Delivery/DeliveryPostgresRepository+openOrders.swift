import Foundation
import MatchingCore
import Postgres
import ServiceKit

/// Where a page of open orders resumes: after the order with this sort key (its distance, or when it was placed) and
/// id. Clients pass it back as it came, `next` of the page before.
struct OpenOrderCursor: Equatable {
    var key: Double
    var id: UUID

    /// `key|id`, as `PageCursor` writes it.
    var text: String { PageCursor.text(["\(key)", id.uuidString.lowercased()]) }

    /// The cursor `text` made; 400 naming `after` for anything else.
    init(text: String) throws {
        let fields = try PageCursor.fields(text, count: 2)
        guard let key = Double(fields[0]), key.isFinite, let id = UUID(uuidString: fields[1]) else {
            throw PageCursor.invalid
        }
        self.init(key: key, id: id)
    }

    init(key: Double, id: UUID) {
        self.key = key
        self.id = id
    }
}

extension DeliveryPostgresRepository {
    /// A page of the campus's orders still waiting for a deliverer (waiting or offered, not expired, asking for no
    /// run), not the caller's own nor of anyone in a block with them, accepting `restaurantId` when given: nearest destination to `point` first when
    /// given, else the longest waiting first.
    func openOrders(
        campus: String, callerId: UUID, from point: GeoPoint?, restaurantId: UUID?, limit: Int,
        after cursor: OpenOrderCursor?
    ) throws -> OpenOrderPage {
        let key: SQL =
            point.map {
                "ST_Distance(\(GeoPoint.geography(lat: "o.destination_lat", lon: "o.destination_lon")), \($0.geography))"
            } ?? "extract(epoch FROM o.created_at)::double precision"
        var conditions: SQL = """
            o.campus = \(campus) AND o.status IN ('waiting', 'offered') AND o.expires_at > now()
              AND o.requested_run_id IS NULL AND o.orderer_id <> \(callerId)
              AND \(ReadModels.unblocked("o.orderer_id", "\(callerId)::uuid"))
            """
        if let restaurantId {
            conditions.append(" AND o.restaurant_ids @> ARRAY[\(restaurantId)]::uuid[]")
        }
        if let cursor {
            conditions.append(" AND (\(key), o.id) > (\(cursor.key)::double precision, \(cursor.id))")
        }
        // NB: the page is chosen first, so that only its orders' restaurants are looked up.
        let rows = try connection.query(
            """
            WITH page AS MATERIALIZED (
                SELECT o.id, \(key) AS sort_key FROM orders o WHERE \(conditions)
                ORDER BY sort_key, o.id LIMIT \(limit)
            )
            SELECT o.id, o.items, o.created_at, o.expires_at, page.sort_key,
                \(unescaped: point == nil ? "NULL::double precision" : "page.sort_key") AS distance,
                split_part(coalesce(u.name, o.orderer_name), ' ', 1) AS first_name,
                \(Self.orderRestaurants) AS restaurants, \(Self.orderDestination)
            FROM page JOIN orders o ON o.id = page.id LEFT JOIN users u ON u.id = o.orderer_id
            ORDER BY page.sort_key, o.id
            """)
        let orders = try rows.map(OpenOrder.init(row:))
        let keys = try rows.map { try $0.decode("sort_key", as: Double.self) }
        let next = orders.count == limit ? keys.last.map { OpenOrderCursor(key: $0, id: orders.last!.id).text } : nil
        return OpenOrderPage(orders: orders, next: next)
    }
}
