import Contracts
import Foundation
import Logging
import MatchingCore
import ServiceKit

/// The delivery flow's settings, from the environment.
public struct DeliverySettings: Sendable {
    public var offerWindow: TimeInterval = 25
    public var defaultRunMinutes = 45
    public var maxRunMinutes = 180
    public var orderLifetime: TimeInterval = 30 * 60
    public var matchRadiusMeters = 300.0
    /// The campuses, and the rule for the points students give (`CampusPoints`).
    public var campuses = CampusPoints(CampusDirectory([]))

    public init() {}

    /// The defaults, overridden by `DELIVERY_OFFER_WINDOW_SECONDS`, `DELIVERY_RUN_DEFAULT_MINUTES`,
    /// `DELIVERY_ORDER_LIFETIME_SECONDS` and `DELIVERY_MATCH_RADIUS_METERS` (or, deprecated, the names without
    /// `DELIVERY_`).
    public init(_ configuration: ServiceConfiguration, logger: Logger) throws {
        let reader = EnvironmentReader(values: configuration.environment)
        let name = { configuration.flowSetting(DeliveryFlow.name, $0, logger: logger) }
        offerWindow = try reader.double(name("OFFER_WINDOW_SECONDS"), in: 1...600) ?? offerWindow
        defaultRunMinutes = try reader.integer(name("RUN_DEFAULT_MINUTES"), in: 1...600) ?? defaultRunMinutes
        orderLifetime = try reader.double(name("ORDER_LIFETIME_SECONDS"), in: 1...86_400) ?? orderLifetime
        matchRadiusMeters = try reader.double(name("MATCH_RADIUS_METERS"), in: 1...10_000) ?? matchRadiusMeters
        campuses = try CampusPoints(configuration)
    }
}

/// A place as the API shows it inside runs and orders; a point an orderer gave as their destination has no id, and
/// the nearest building's name.
public struct PlaceSummary: Codable, Sendable, Equatable {
    public var id: UUID?
    public var name: String
    public var latitude: Double
    public var longitude: Double
}

public struct Run: Codable, Sendable, Equatable {
    public var id: UUID
    public var delivererId: UUID
    public var delivererName: String
    public var restaurant: PlaceSummary
    public var destination: PlaceSummary
    public var capacity: Int
    public var held: Int
    public var status: RunStatus
    public var closesAt: Date
    /// From the point the caller asked about, when they gave one.
    public var distanceMeters: Double?
}

public struct Order: Codable, Sendable, Equatable {
    public var id: UUID
    /// The first of `restaurants`.
    public var restaurant: PlaceSummary
    /// The restaurants the orderer accepts, any of them, as they named them.
    public var restaurants: [PlaceSummary]
    public var destination: PlaceSummary
    public var items: String
    public var status: OrderStatus
    public var requestedRunId: UUID?
    /// The active match, once a deliverer accepted.
    public var matchId: UUID?
    public var expiresAt: Date
    public var createdAt: Date
}

/// An order still waiting for a deliverer, as a deliverer browsing the campus's open requests sees it: never the
/// orderer's email or full name.
public struct OpenOrder: Codable, Sendable, Equatable {
    public var id: UUID
    public var items: String
    public var restaurants: [PlaceSummary]
    public var destination: PlaceSummary
    /// From the point the deliverer gave to the destination, when they gave one.
    public var distanceMeters: Double?
    public var ordererFirstName: String
    public var placedAt: Date
    public var expiresAt: Date
}

/// A page of open orders and the `after` of the next page (nil on the last).
public struct OpenOrderPage: Codable, Sendable, Equatable {
    public var orders: [OpenOrder]
    public var next: String?
}

/// Where an order goes: a building of the campus, or a point on it the orderer gave.
public enum OrderDestination: Sendable, Equatable {
    case building(UUID)
    case point(GeoPoint)
}

public struct Offer: Codable, Sendable, Equatable {
    public var id: UUID
    public var orderId: UUID
    public var runId: UUID
    public var status: OfferStatus
    public var expiresAt: Date
}

/// What one student has under way in the delivery flow, from any device: the runs they are checked in to, their
/// orders not yet over, and their active matches as orderer or deliverer. Offers are not here: each lives seconds,
/// and comes on the socket (and stays in the feed).
public struct DeliveryUnderWay: Codable, Sendable, Equatable {
    public var runs: [Run]
    public var orders: [Order]
    public var matches: [Match]
}

public struct Match: Codable, Sendable, Equatable {
    public var id: UUID
    public var orderId: UUID
    public var runId: UUID
    public var status: MatchStatus
    public var ordererId: UUID
    public var ordererName: String
    public var delivererId: UUID
    public var delivererName: String
    public var restaurant: PlaceSummary
    public var destination: PlaceSummary
    public var items: String
    public var ordererCompleted: Bool
    public var delivererCompleted: Bool
    /// The deliverer's latest position while the match is active, for the orderer to watch their food come.
    public var delivererPosition: LivePosition?
}

/// A restaurant of the campus with open runs.
public struct RestaurantWithRuns: Codable, Sendable, Equatable {
    public var restaurant: PlaceSummary
    public var openRuns: Int
    public var freeSeats: Int
}

/// Request rules, without I/O.
enum DeliveryRules {
    /// How many orders one student may have waiting, offered or matched at once.
    static let maxOpenOrders = 3

    /// Whether a student with `openOrders` orders waiting, offered or matched may place another.
    static func checkOpenOrders(_ openOrders: Int) throws(MatchingError) {
        guard openOrders < maxOpenOrders else {
            throw .conflict("You already have \(openOrders) open orders; cancel one or wait until one is done.")
        }
    }

    /// How many restaurants an order may name.
    static let maxRestaurants = 5

    /// The restaurants an order names: `restaurantId` or `restaurantIds` (one to five, each once), not both.
    static func restaurants(_ single: UUID?, _ several: [UUID]?) throws(MatchingError) -> [UUID] {
        switch (single, several) {
        case (let id?, nil):
            return [id]
        case (nil, let ids?):
            guard !ids.isEmpty else { throw .invalid(field: "restaurantIds", "Name at least one restaurant.") }
            guard ids.count <= maxRestaurants else {
                throw .invalid(field: "restaurantIds", "An order names at most \(maxRestaurants) restaurants.")
            }
            guard Set(ids).count == ids.count else {
                throw .invalid(field: "restaurantIds", "Each restaurant is named once.")
            }
            return ids
        default:
            throw .invalid(field: "restaurantIds", "Give restaurantId or restaurantIds (one to five), not both.")
        }
    }

    /// Where an order goes: `destinationId` (a building) or `destination` (a point `{lat, lon}`), not both.
    static func destination(id: UUID?, point: GeoPoint?) throws -> OrderDestination {
        switch (id, point) {
        case (let id?, nil): return .building(id)
        case (nil, let point?):
            return .point(try GeoPoint.validated(lat: point.lat, lon: point.lon, field: "destination"))
        default:
            throw MatchingError.invalid(
                field: "destination", "Give destinationId (a building) or destination {\"lat\", \"lon\"}, not both.")
        }
    }

    /// How many open orders a page holds: 20 unless asked, at most 50.
    static func capacity(_ value: Int?) throws(MatchingError) -> Int {
        let capacity = value ?? 1
        guard (1...4).contains(capacity) else { throw .invalid(field: "capacity", "capacity is 1 to 4 orders.") }
        return capacity
    }

    static func minutes(_ value: Int?, settings: DeliverySettings) throws(MatchingError) -> Int {
        let minutes = value ?? settings.defaultRunMinutes
        guard (1...settings.maxRunMinutes).contains(minutes) else {
            throw .invalid(field: "minutes", "minutes is 1 to \(settings.maxRunMinutes).")
        }
        return minutes
    }

    static func items(_ value: String) throws(MatchingError) -> String {
        let items = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !items.isEmpty else { throw .invalid(field: "items", "Say what to bring.") }
        guard value.unicodeScalars.count <= 500 else {
            throw .invalid(field: "items", "items can have at most 500 characters.")
        }
        return items
    }
}
