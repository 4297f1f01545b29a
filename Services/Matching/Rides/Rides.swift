import Contracts
import Foundation
import Logging
import MatchingCore
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
    /// The campuses, and the rule for the points students give (`CampusPoints`): pickups on the campus, drop-offs
    /// within its drop-off radius, drivers offered rides within its margin.
    public var campuses = CampusPoints(CampusDirectory([]))

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
        campuses = try CampusPoints(configuration)
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
    /// The code the driver enters to start the ride (`RideCode`): to the rider only, from when a driver accepts.
    public var code: String? = nil
    /// Why a cancelled ride was cancelled.
    public var cancelReason: RideCancelReason? = nil
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
