import Contracts
import Foundation
import Logging
import MatchingCore
import Postgres
import ServiceKit

/// The rides flow's settings, from the environment.
public struct RideSettings: Sendable {
    /// How long a round of offers waits for an accept before the next, wider one.
    public var offerWindow: TimeInterval = 15
    /// How many drivers the first round is offered to; each round after adds as many.
    public var offerCount = 3
    /// The radius of the first round; each round after doubles it.
    public var offerRadiusMeters = 1000.0
    /// How many rounds a request is offered in before it waits in the list alone.
    public var offerRounds = 4
    /// How long a request stays open when nobody accepts it.
    public var rideLifetime: TimeInterval = 10 * 60
    /// How long a driver stays online after their last position.
    public var onlineWindow: TimeInterval = 60

    public init() {}

    /// The defaults, overridden by `RIDES_OFFER_WINDOW_SECONDS`, `RIDES_OFFER_COUNT`, `RIDES_OFFER_RADIUS_METERS`,
    /// `RIDES_OFFER_ROUNDS`, `RIDES_LIFETIME_SECONDS` and `RIDES_DRIVER_ONLINE_SECONDS` (or, deprecated, the same names
    /// with `RIDE_`).
    public init(_ configuration: ServiceConfiguration, logger: Logger) throws {
        let reader = EnvironmentReader(values: configuration.environment)
        let name = { configuration.flowSetting(RidesFlow.name, $0, formerly: "RIDE_\($0)", logger: logger) }
        offerWindow = try reader.double(name("OFFER_WINDOW_SECONDS"), in: 0.1...600) ?? offerWindow
        offerCount = try reader.integer(name("OFFER_COUNT"), in: 1...50) ?? offerCount
        offerRadiusMeters = try reader.double(name("OFFER_RADIUS_METERS"), in: 1...50_000) ?? offerRadiusMeters
        offerRounds = try reader.integer(name("OFFER_ROUNDS"), in: 1...10) ?? offerRounds
        rideLifetime = try reader.double(name("LIFETIME_SECONDS"), in: 1...86_400) ?? rideLifetime
        onlineWindow = try reader.double(name("DRIVER_ONLINE_SECONDS"), in: 1...3600) ?? onlineWindow
    }
}

/// Where a ride is: open to accept, accepted and under way (the driver arrived, the ride started), or over.
public enum RideStatus: String, Codable, Sendable, PostgresDecodable {
    case open, accepted, arrived, started, completed, cancelled, expired

    public init?(postgresText: String) {
        self.init(rawValue: postgresText)
    }

    /// Accepted and not finished: the driver holds the ride and the rider sees where they are.
    public var isUnderway: Bool {
        self == .accepted || self == .arrived || self == .started
    }

    /// Before the rider is in the car: either side may still call it off.
    public var isCancellable: Bool {
        self == .open || self == .accepted || self == .arrived
    }
}

/// What a driver marks of their ride, in this order.
public enum RideStep: String, Sendable, CaseIterable {
    case arrived, started, completed

    /// The status the ride must have for this step.
    var from: RideStatus {
        switch self {
        case .arrived: .accepted
        case .started: .arrived
        case .completed: .started
        }
    }

    /// The status this step leaves.
    var to: RideStatus {
        switch self {
        case .arrived: .arrived
        case .started: .started
        case .completed: .completed
        }
    }
}

/// A driver's profile as they see it, with whether they are online and where they last were.
public struct Driver: Codable, Sendable, Equatable {
    public var userId: UUID
    public var name: String
    public var car: String
    public var seats: Int
    public var isOnline: Bool
    public var position: LivePosition?
    public var updatedAt: Date
}

/// A ride request, to its rider and to the driver who accepted it.
public struct Ride: Codable, Sendable, Equatable {
    public var id: UUID
    public var riderId: UUID
    public var riderName: String
    public var pickup: RideSpot
    public var dropoff: RideSpot?
    public var note: String?
    public var status: RideStatus
    /// The driver who accepted, with their latest position while the ride is under way.
    public var driver: RideDriver?
    /// The match, and so the chat, of the rider and the driver.
    public var matchId: UUID?
    public var expiresAt: Date
    public var createdAt: Date
    public var acceptedAt: Date?
    public var arrivedAt: Date?
    public var startedAt: Date?
    public var finishedAt: Date?
}

/// An open request as a driver nearby sees it.
public struct RideRequest: Codable, Sendable, Equatable {
    public var id: UUID
    public var riderName: String
    public var pickup: RideSpot
    public var dropoff: RideSpot?
    public var note: String?
    /// From where the driver asked about to the pickup.
    public var distanceMeters: Double
    public var expiresAt: Date
    public var createdAt: Date
}

/// Open requests near a driver, nearest first.
public struct RideRequestList: Codable, Sendable, Equatable {
    public var requests: [RideRequest]
}

/// A ride request's content, validated.
public struct RideDraft: Sendable, Equatable {
    public var pickup: PlaceChoice
    public var dropoff: PlaceChoice?
    public var note: String?

    public init(pickup: PlaceChoice, dropoff: PlaceChoice?, note: String?) {
        self.pickup = pickup
        self.dropoff = dropoff
        self.note = note
    }
}

/// One round of offers: the drivers within `radiusMeters` of the pickup, at most `count` of them.
public struct OfferRound: Sendable, Equatable {
    public var number: Int
    public var radiusMeters: Double
    public var count: Int
}

/// The rules of drivers, requests and offers, without I/O.
public enum RideRules {
    public static let maxCar = 80
    public static let maxNote = 500
    public static let defaultRadius = 2000.0
    public static let maxRadius = 50_000.0

    /// A car described in 1 to 80 characters on one line ("Blue Toyota Yaris, ABC-123").
    static func car(_ raw: String) throws -> String {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw MatchingError.invalid(field: "car", "car describes your car.") }
        guard text.count <= maxCar else {
            throw MatchingError.invalid(field: "car", "car can have at most \(maxCar) characters.")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw MatchingError.invalid(field: "car", "car is one line without control characters.")
        }
        return text
    }

    /// Seats for riders: 1 to 8.
    static func seats(_ seats: Int) throws -> Int {
        guard (1...8).contains(seats) else { throw MatchingError.invalid(field: "seats", "seats is from 1 to 8.") }
        return seats
    }

    /// An optional note of at most 500 characters (line breaks allowed); nil when blank.
    static func note(_ raw: String?) throws -> String? {
        let text = (raw ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.count <= maxNote else {
            throw MatchingError.invalid(field: "note", "note can have at most \(maxNote) characters.")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" }) else {
            throw MatchingError.invalid(field: "note", "note cannot contain control characters.")
        }
        return text.isEmpty ? nil : text
    }

    /// A query parameter that is a number; 400 naming it when it is missing (and `required`) or not a number.
    static func number(_ raw: String?, field: String, required: Bool) throws -> Double? {
        guard let raw else {
            guard !required else { throw MatchingError.invalid(field: field, "\(field) is required.") }
            return nil
        }
        guard let value = Double(raw), value.isFinite else {
            throw MatchingError.invalid(field: field, "\(field) is a number.")
        }
        return value
    }

    /// Where a driver asks from: `lat` and `lon`, both required.
    static func near(lat: String?, lon: String?) throws -> GeoPoint {
        try GeoPoint.validated(
            lat: number(lat, field: "lat", required: true)!, lon: number(lon, field: "lon", required: true)!, field: nil
        )
    }

    /// The radius of a list in meters: 1 to 50,000, 2,000 when not given.
    static func radius(_ raw: String?) throws -> Double {
        guard let radius = try number(raw, field: "radius", required: false) else { return defaultRadius }
        guard radius >= 1, radius <= maxRadius else {
            throw MatchingError.invalid(field: "radius", "radius is a distance in meters from 1 to \(Int(maxRadius)).")
        }
        return radius
    }

    /// Round `number` (from 1) of offers: the radius doubles and the count grows by the first count each round; nil
    /// after the last round.
    static func offerRound(_ number: Int, settings: RideSettings) -> OfferRound? {
        guard number >= 1, number <= settings.offerRounds else { return nil }
        return OfferRound(
            number: number, radiusMeters: settings.offerRadiusMeters * pow(2, Double(number - 1)),
            count: settings.offerCount * number)
    }

    /// The status a driver's step leaves, or 409 when the ride is not where that step follows.
    static func status(after step: RideStep, from status: RideStatus) throws -> RideStatus {
        guard status == step.from else {
            throw MatchingError.conflict(
                "A ride is marked \(step.rawValue) once it is \(step.from.rawValue); this one is \(status.rawValue).")
        }
        return step.to
    }

    /// The subject of a ride's chat: "Ride from Porthania to Metsätalo", naming only the places given as places.
    static func subject(pickup: String?, dropoff: String?) -> String {
        switch (pickup, dropoff) {
        case (let pickup?, let dropoff?): "Ride from \(pickup) to \(dropoff)"
        case (let pickup?, nil): "Ride from \(pickup)"
        case (nil, let dropoff?): "Ride to \(dropoff)"
        case (nil, nil): "Ride"
        }
    }
}
