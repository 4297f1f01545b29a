import Contracts
import Foundation

/// Where a ride starts or ends: a point, and the place it was given as when it was given as one.
public struct RideSpot: Codable, Sendable, Equatable {
    public var lat: Double
    public var lon: Double
    public var placeId: UUID?
    public var name: String?

    public init(lat: Double, lon: Double, placeId: UUID? = nil, name: String? = nil) {
        self.lat = lat
        self.lon = lon
        self.placeId = placeId
        self.name = name
    }
}

/// The driver of a ride as its rider sees them: never an email, their car, where they are.
public struct RideDriver: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var car: String
    public var seats: Int
    /// While the ride is accepted and not finished, when the driver has sent one.
    public var position: LivePosition?

    public init(id: UUID, name: String, car: String, seats: Int, position: LivePosition?) {
        self.id = id
        self.name = name
        self.car = car
        self.seats = seats
        self.position = position
    }
}

/// A ride request was offered to one nearby online driver: their socket hears it with how far the pickup is.
public struct RideOffered: Event, Equatable {
    public static let type = "ride.offered"
    public var rideId: UUID
    public var campus: String
    /// Beside the rider's name and note, so that a rider who deletes their account is found in what was sent.
    public var riderId: UUID
    public var riderName: String
    public var pickup: RideSpot
    public var dropoff: RideSpot?
    public var note: String?
    /// From the driver's latest position to the pickup.
    public var distanceMeters: Double
    /// The request's end when nobody accepts it.
    public var expiresAt: Date
    public var recipients: [UUID]
    public var version: Int64
    public var notice: Notice?
    public var aggregateId: UUID { rideId }

    public init(
        rideId: UUID, campus: String, riderId: UUID, riderName: String, pickup: RideSpot, dropoff: RideSpot?,
        note: String?, driverId: UUID, distanceMeters: Double, expiresAt: Date, version: Int64
    ) {
        self.rideId = rideId
        self.campus = campus
        self.riderId = riderId
        self.riderName = riderName
        self.pickup = pickup
        self.dropoff = dropoff
        self.note = note
        self.distanceMeters = distanceMeters
        self.expiresAt = expiresAt
        self.recipients = [driverId]
        self.version = version
        notice = Notice(
            title: "A ride for \(Notice.firstName(riderName))",
            body: "Pickup \(Int(distanceMeters.rounded())) m away" + (note.map { ": \($0)" } ?? ""))
    }
}

/// A driver accepted a ride: the rider is told who comes, in what car, from where, and the code they tell the driver;
/// chat opens from `match.opened`. NB: it goes to the rider alone, for the code is never the driver's to see.
public struct RideAccepted: Event, Equatable {
    public static let type = "ride.accepted"
    public var rideId: UUID
    /// The match, and so the chat, of this rider and driver.
    public var matchId: UUID
    public var campus: String
    public var driver: RideDriver
    /// The four digits the driver enters to start the ride.
    public var code: String
    public var recipients: [UUID]
    public var version: Int64
    public var notice: Notice?
    public var aggregateId: UUID { rideId }

    public init(
        rideId: UUID, matchId: UUID, campus: String, riderId: UUID, driver: RideDriver, code: String, version: Int64
    ) {
        self.rideId = rideId
        self.matchId = matchId
        self.campus = campus
        self.driver = driver
        self.code = code
        self.recipients = [riderId]
        self.version = version
        notice = Notice(
            title: "\(Notice.firstName(driver.name)) is coming", body: "Tell them \(code) when you get in.")
    }
}

/// Why a ride was cancelled: its rider called it off, or its driver entered a wrong code too many times.
public enum RideCancelReason: String, Codable, Sendable, CaseIterable {
    case rider, codeRefused
    /// One of the two blocked the other.
    case blocked
}

/// A ride was called off: its driver is told when the rider cancels (or, before anyone accepted, the drivers it was
/// offered to); both are told when wrong codes cancelled it.
public struct RideCancelled: Event, Equatable {
    public static let type = "ride.cancelled"
    public var rideId: UUID
    /// The rider who called it off, or the driver whose codes were refused.
    public var cancelledBy: UUID
    public var reason: RideCancelReason
    public var recipients: [UUID]
    public var version: Int64
    public var aggregateId: UUID { rideId }

    public init(rideId: UUID, cancelledBy: UUID, reason: RideCancelReason, recipients: [UUID], version: Int64) {
        self.rideId = rideId
        self.cancelledBy = cancelledBy
        self.reason = reason
        self.recipients = recipients
        self.version = version
    }
}

/// The driver of a ride gave it up: the request is open again and offered anew, and the rider is told.
public struct RideReopened: Event, Equatable {
    public static let type = "ride.reopened"
    public var rideId: UUID
    /// The driver who gave it up.
    public var driverId: UUID
    public var expiresAt: Date
    public var recipients: [UUID]
    public var version: Int64
    public var aggregateId: UUID { rideId }

    public init(rideId: UUID, driverId: UUID, riderId: UUID, expiresAt: Date, version: Int64) {
        self.rideId = rideId
        self.driverId = driverId
        self.expiresAt = expiresAt
        self.recipients = [riderId]
        self.version = version
    }
}

/// The driver marked a step of a ride, arrived, started or completed (`Step` gives which): the rider is told.
public struct RideProgressed<Step: RideProgress>: Event, Equatable {
    public static var type: String { Step.type }
    public var rideId: UUID
    public var driverId: UUID
    public var recipients: [UUID]
    public var version: Int64
    public var notice: Notice?
    public var aggregateId: UUID { rideId }

    public init(rideId: UUID, driverId: UUID, riderId: UUID, version: Int64) {
        self.rideId = rideId
        self.driverId = driverId
        self.recipients = [riderId]
        self.version = version
        notice = Step.notice
    }
}

/// What a step of a ride makes of `RideProgressed`: its type, and its push if it has one.
public protocol RideProgress: Sendable {
    static var type: String { get }
    static var notice: Notice? { get }
}

/// The driver is at the pickup.
public typealias RideArrived = RideProgressed<RideArrival>
/// The rider is in the car and the ride is under way.
public typealias RideStarted = RideProgressed<RideStart>
/// The driver finished the ride; its chat closes from `match.closed`.
public typealias RideCompleted = RideProgressed<RideCompletion>

/// `ride.arrived`, pushed to the rider.
public enum RideArrival: RideProgress {
    public static let type = "ride.arrived"
    public static let notice: Notice? = Notice(title: "Your driver is here", body: "They are waiting at the pickup.")
}

/// `ride.started`, without a push.
public enum RideStart: RideProgress {
    public static let type = "ride.started"
    public static let notice: Notice? = nil
}

/// `ride.completed`, without a push.
public enum RideCompletion: RideProgress {
    public static let type = "ride.completed"
    public static let notice: Notice? = nil
}

/// Nobody accepted a ride request in its lifetime: the rider is told it is over.
public struct RideExpired: Event, Equatable {
    public static let type = "ride.expired"
    public var rideId: UUID
    public var recipients: [UUID]
    public var version: Int64
    public var aggregateId: UUID { rideId }

    public init(rideId: UUID, riderId: UUID, version: Int64) {
        self.rideId = rideId
        self.recipients = [riderId]
        self.version = version
    }
}
