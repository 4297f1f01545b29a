import Foundation

/// Matching's settings, from the environment.
struct DeliverySettings: Sendable {
    var offerWindow: TimeInterval = 25
    var defaultRunMinutes = 45
    var maxRunMinutes = 180
    var orderLifetime: TimeInterval = 30 * 60
    var matchRadiusMeters = 300.0
    var schedulerInterval: TimeInterval = 0.5
}

/// The caller, as matching needs to know them.
struct Caller: Sendable {
    var userId: UUID
    var campus: String
    var name: String
}

/// A place as the API shows it inside runs and orders.
struct PlaceSummary: Codable, Sendable, Equatable {
    var id: UUID
    var name: String
    var latitude: Double
    var longitude: Double
}

struct Run: Codable, Sendable, Equatable {
    var id: UUID
    var delivererId: UUID
    var delivererName: String
    var restaurant: PlaceSummary
    var destination: PlaceSummary
    var capacity: Int
    var held: Int
    var status: RunStatus
    var closesAt: Date
    /// From the point the caller asked about, when they gave one.
    var distanceMeters: Double?
}

struct Order: Codable, Sendable, Equatable {
    var id: UUID
    var restaurant: PlaceSummary
    var destination: PlaceSummary
    var items: String
    var status: OrderStatus
    var requestedRunId: UUID?
    /// The active match, once a deliverer accepted.
    var matchId: UUID?
    var expiresAt: Date
    var createdAt: Date
}

struct Offer: Codable, Sendable, Equatable {
    var id: UUID
    var orderId: UUID
    var runId: UUID
    var status: OfferStatus
    var expiresAt: Date
}

struct Match: Codable, Sendable, Equatable {
    var id: UUID
    var orderId: UUID
    var runId: UUID
    var status: MatchStatus
    var ordererId: UUID
    var ordererName: String
    var delivererId: UUID
    var delivererName: String
    var restaurant: PlaceSummary
    var destination: PlaceSummary
    var items: String
    var ordererCompleted: Bool
    var delivererCompleted: Bool
}

/// A restaurant of the campus with open runs.
struct RestaurantWithRuns: Codable, Sendable, Equatable {
    var restaurant: PlaceSummary
    var openRuns: Int
    var freeSeats: Int
}

/// Request rules, without I/O.
enum DeliveryRules {
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
