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
    }
}

/// A place as the API shows it inside runs and orders.
public struct PlaceSummary: Codable, Sendable, Equatable {
    public var id: UUID
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
    public var restaurant: PlaceSummary
    public var destination: PlaceSummary
    public var items: String
    public var status: OrderStatus
    public var requestedRunId: UUID?
    /// The active match, once a deliverer accepted.
    public var matchId: UUID?
    public var expiresAt: Date
    public var createdAt: Date
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
        guard items.count <= 500 else { throw .invalid(field: "items", "items can have at most 500 characters.") }
        return items
    }
}
