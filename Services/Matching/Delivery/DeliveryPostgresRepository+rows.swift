import Contracts
import Foundation
import MatchingCore
import Postgres

extension Run {
    /// From a row of `DeliveryPostgresRepository.runs`: the restaurant's columns prefixed `r_`, the destination's `d_`.
    init(row: PostgresRow) throws {
        self.init(
            id: try row.decode("id"), delivererId: try row.decode("deliverer_id"),
            delivererName: try row.decode("deliverer_name"), restaurant: try PlaceSummary(row: row, prefix: "r_"),
            destination: try PlaceSummary(row: row, prefix: "d_"), capacity: try row.decode("capacity"),
            held: try row.decode("held"), status: try RunStatus(text: try row.decode("status")),
            closesAt: try row.decode("closes_at"), distanceMeters: try row.decode("distance"))
    }
}

extension Order {
    /// From a row of `DeliveryPostgresRepository.order`: `restaurants` as `orderRestaurants` makes it, the
    /// destination's columns prefixed `d_`.
    init(row: PostgresRow) throws {
        let restaurants = try [PlaceSummary](json: row.decode("restaurants"))
        self.init(
            id: try row.decode("id"), restaurant: restaurants[0], restaurants: restaurants,
            destination: try PlaceSummary(row: row, prefix: "d_"), items: try row.decode("items"),
            status: try OrderStatus(text: try row.decode("status")),
            requestedRunId: try row.decode("requested_run_id"),
            matchId: try row.decode("match_id"), expiresAt: try row.decode("expires_at"),
            createdAt: try row.decode("created_at"))
    }
}

extension OrderState {
    init(row: PostgresRow) throws {
        self.init(
            id: try row.decode("id"), ordererId: try row.decode("orderer_id"),
            ordererName: try row.decode("orderer_name"),
            status: try OrderStatus(text: try row.decode("status")),
            restaurantIds: try (row.decode("restaurant_ids") as String).split(separator: ",").map {
                guard let id = UUID(uuidString: String($0)) else { throw PostgresError.decoding("restaurant id \($0)") }
                return id
            }, destination: try PlaceSummary(row: row, prefix: "d_"),
            requestedRunId: try row.decode("requested_run_id"), campus: try row.decode("campus"),
            items: try row.decode("items"), isExpired: try row.decode("expired"))
    }
}

extension OpenOrder {
    /// From a row of `DeliveryPostgresRepository.openOrders`.
    init(row: PostgresRow) throws {
        self.init(
            id: try row.decode("id"), items: try row.decode("items"),
            restaurants: try [PlaceSummary](json: row.decode("restaurants")),
            destination: try PlaceSummary(row: row, prefix: "d_"), distanceMeters: try row.decode("distance"),
            ordererFirstName: try row.decode("first_name"), placedAt: try row.decode("created_at"),
            expiresAt: try row.decode("expires_at"))
    }
}

extension [PlaceSummary] {
    /// From the JSON array `DeliveryPostgresRepository.orderRestaurants` makes.
    init(json: String) throws {
        self = try JSONDecoder().decode([PlaceSummary].self, from: Data(json.utf8))
        guard !isEmpty else { throw PostgresError.decoding("an order without restaurants") }
    }
}

extension OfferState {
    init(row: PostgresRow) throws {
        self.init(
            id: try row.decode("id"), orderId: try row.decode("order_id"), runId: try row.decode("run_id"),
            delivererId: try row.decode("deliverer_id"), status: try OfferStatus(text: try row.decode("status")),
            isExpired: try row.decode("expired"), version: try row.decode("version"))
    }
}

extension OfferEnded {
    /// From the `RETURNING id, order_id, deliverer_id, version` of an offer just withdrawn.
    init(withdrawn row: PostgresRow) throws {
        self.init(
            offerId: try row.decode("id"), orderId: try row.decode("order_id"),
            delivererId: try row.decode("deliverer_id"),
            version: try row.decode("version"))
    }
}

extension Match {
    init(row: PostgresRow) throws {
        self.init(
            id: try row.decode("id"), orderId: try row.decode("order_id"), runId: try row.decode("run_id"),
            status: try MatchStatus(text: try row.decode("status")), ordererId: try row.decode("orderer_id"),
            ordererName: try row.decode("orderer_name"), delivererId: try row.decode("deliverer_id"),
            delivererName: try row.decode("deliverer_name"), restaurant: try PlaceSummary(row: row, prefix: "r_"),
            destination: try PlaceSummary(row: row, prefix: "d_"), items: try row.decode("items"),
            ordererCompleted: try row.decode("orderer_completed"),
            delivererCompleted: try row.decode("deliverer_completed"),
            delivererPosition: try (row.decode("deliverer_position_at") as Date?).map {
                LivePosition(lat: try row.decode("deliverer_lat"), lon: try row.decode("deliverer_lon"), at: $0)
            })
    }
}

extension Dispatch.Candidate {
    init(row: PostgresRow) throws {
        self.init(
            runId: try row.decode("id", as: UUID.self).uuidString, detourMeters: try row.decode("detour"),
            freeSeats: try row.decode("free"), wasOfferedBefore: try row.decode("offered"))
    }
}

extension RestaurantWithRuns {
    init(row: PostgresRow) throws {
        self.init(
            restaurant: try PlaceSummary(row: row, prefix: ""), openRuns: try row.decode("runs"),
            freeSeats: try row.decode("seats"))
    }
}

extension PlaceSummary {
    /// From the columns `<prefix>id`, `<prefix>name`, `<prefix>latitude` and `<prefix>longitude`.
    init(row: PostgresRow, prefix: String) throws {
        id = try row.decode("\(prefix)id")
        name = try row.decode("\(prefix)name")
        latitude = try row.decode("\(prefix)latitude")
        longitude = try row.decode("\(prefix)longitude")
    }
}

extension RawRepresentable where RawValue == String {
    /// A state from its column's text.
    init(text: String) throws {
        guard let value = Self(rawValue: text) else { throw PostgresError.decoding("unknown state \(text)") }
        self = value
    }
}
