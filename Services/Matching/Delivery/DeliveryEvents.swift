import Contracts
import Foundation

/// A deliverer checked in at a restaurant, heading to a building.
public struct RunOpened: Event, Equatable {
    public static let type = "run.opened"
    public var runId: UUID
    public var campus: String
    public var delivererId: UUID
    public var restaurant: PlaceReference
    public var destination: PlaceReference
    public var capacity: Int
    public var closesAt: Date
    public var version: Int64
    public var aggregateId: UUID { runId }

    public init(
        runId: UUID, campus: String, delivererId: UUID, restaurant: PlaceReference, destination: PlaceReference,
        capacity: Int, closesAt: Date, version: Int64
    ) {
        self.runId = runId
        self.campus = campus
        self.delivererId = delivererId
        self.restaurant = restaurant
        self.destination = destination
        self.capacity = capacity
        self.closesAt = closesAt
        self.version = version
    }
}

/// A run ended: the deliverer checked out, or its window passed (`reason` `checkedOut` or `expired`).
public struct RunClosed: Event, Equatable {
    public static let type = "run.closed"
    public var runId: UUID
    public var delivererId: UUID
    public var reason: String
    public var version: Int64
    /// The users it concerns: whose feeds it goes to.
    public var recipients: [UUID]
    public var aggregateId: UUID { runId }

    public init(runId: UUID, delivererId: UUID, reason: String, version: Int64) {
        self.runId = runId
        self.delivererId = delivererId
        self.reason = reason
        self.version = version
        recipients = [delivererId]
    }
}

/// An orderer asked for food from any of a few restaurants (`restaurant` is the first) to a building or a point.
public struct OrderPlaced: Event, Equatable {
    public static let type = "order.placed"
    public var orderId: UUID
    public var campus: String
    public var ordererId: UUID
    public var restaurant: PlaceReference
    public var restaurants: [PlaceReference]
    public var destination: PlaceReference
    public var items: String
    public var expiresAt: Date
    public var version: Int64
    public var aggregateId: UUID { orderId }

    public init(
        orderId: UUID, campus: String, ordererId: UUID, restaurants: [PlaceReference], destination: PlaceReference,
        items: String, expiresAt: Date, version: Int64
    ) {
        self.orderId = orderId
        self.campus = campus
        self.ordererId = ordererId
        restaurant = restaurants[0]
        self.restaurants = restaurants
        self.destination = destination
        self.items = items
        self.expiresAt = expiresAt
        self.version = version
    }
}

/// An order is on the campus's open requests, where deliverers browse: the orderer's word that it is.
public struct OrderOpened: Event, Equatable {
    public static let type = "order.opened"
    public var orderId: UUID
    public var campus: String
    public var expiresAt: Date
    public var version: Int64
    /// The users it concerns: whose feeds it goes to.
    public var recipients: [UUID]
    public var aggregateId: UUID { orderId }

    public init(orderId: UUID, campus: String, ordererId: UUID, expiresAt: Date, version: Int64) {
        self.orderId = orderId
        self.campus = campus
        self.expiresAt = expiresAt
        self.version = version
        recipients = [ordererId]
    }
}

/// A deliverer took an order from the open requests: the match it made follows as `match.accepted`.
public struct OrderTaken: Event, Equatable {
    public static let type = "order.taken"
    public var orderId: UUID
    public var matchId: UUID
    /// Beside the name, so that a deliverer who deletes their account is found and erased in what was sent.
    public var delivererId: UUID
    public var delivererName: String
    public var version: Int64
    /// The users it concerns: whose feeds it goes to.
    public var recipients: [UUID]
    public var aggregateId: UUID { orderId }

    public init(
        orderId: UUID, matchId: UUID, ordererId: UUID, delivererId: UUID, delivererName: String, version: Int64
    ) {
        self.orderId = orderId
        self.matchId = matchId
        self.delivererId = delivererId
        self.delivererName = delivererName
        self.version = version
        recipients = [ordererId]
    }
}

/// An order was offered to one deliverer, who has until `expiresAt` to answer: the deliverer's "new match".
public struct OfferMade: Event, Equatable {
    public static let type = "offer.made"
    public var offerId: UUID
    public var orderId: UUID
    public var runId: UUID
    public var delivererId: UUID
    /// Beside the orderer's name and items, so that an orderer who deletes their account is found in what was sent.
    public var ordererId: UUID
    public var ordererName: String
    public var restaurant: PlaceReference
    public var destination: PlaceReference
    public var items: String
    public var expiresAt: Date
    public var version: Int64
    /// The users it concerns: whose feeds it goes to.
    public var recipients: [UUID]
    /// "Olli's order: falafel from Unicafe to Porthania: 60 s to answer".
    public var notice: Notice?
    public var aggregateId: UUID { offerId }

    public init(
        offerId: UUID, orderId: UUID, runId: UUID, delivererId: UUID, ordererId: UUID, ordererName: String,
        restaurant: PlaceReference, destination: PlaceReference, items: String, expiresAt: Date, version: Int64
    ) {
        self.offerId = offerId
        self.orderId = orderId
        self.runId = runId
        self.delivererId = delivererId
        self.ordererId = ordererId
        self.ordererName = ordererName
        self.restaurant = restaurant
        self.destination = destination
        self.items = items
        self.expiresAt = expiresAt
        self.version = version
        recipients = [delivererId]
        let seconds = max(0, Int(expiresAt.timeIntervalSinceNow.rounded()))
        notice = Notice(
            title: "\(Notice.firstName(ordererName))'s order",
            body: "\(items) from \(restaurant.name) to \(destination.name): \(seconds) s to answer")
    }
}

/// An offer ended without a match: declined by its deliverer, expired, or withdrawn.
public struct OfferEnded: Codable, Sendable, Equatable {
    public var offerId: UUID
    public var orderId: UUID
    public var delivererId: UUID
    public var version: Int64

    public init(offerId: UUID, orderId: UUID, delivererId: UUID, version: Int64) {
        self.offerId = offerId
        self.orderId = orderId
        self.delivererId = delivererId
        self.version = version
    }
}

/// An offer its deliverer let go, declined or expired (`Ending` gives which): the deliverer's other devices are told.
public struct OfferLetGo<Ending: OfferEnding>: Event, Equatable {
    public static var type: String { Ending.type }
    public var offer: OfferEnded
    public var version: Int64 { offer.version }
    /// The users it concerns: whose feeds it goes to.
    public var recipients: [UUID]
    public var aggregateId: UUID { offer.offerId }

    public init(offer: OfferEnded) {
        self.offer = offer
        recipients = [offer.delivererId]
    }
}

/// How an offer ended without its deliverer taking it: the type of its `OfferLetGo`.
public protocol OfferEnding: Sendable {
    static var type: String { get }
}

/// The deliverer said no.
public typealias OfferDeclined = OfferLetGo<OfferDecline>
/// The deliverer did not answer in time.
public typealias OfferExpired = OfferLetGo<OfferExpiry>

/// `offer.declined`.
public enum OfferDecline: OfferEnding {
    public static let type = "offer.declined"
}

/// `offer.expired`.
public enum OfferExpiry: OfferEnding {
    public static let type = "offer.expired"
}

/// The offer went away before its deliverer answered: its order was cancelled or expired (`reason`
/// `orderCancelled`, `orderExpired`), or its run closed (`runClosed`). Accepting it now answers 409.
public struct OfferWithdrawn: Event, Equatable {
    public static let type = "offer.withdrawn"
    public var offer: OfferEnded
    public var reason: String
    public var version: Int64 { offer.version }
    /// The users it concerns: whose feeds it goes to.
    public var recipients: [UUID]
    public var aggregateId: UUID { offer.offerId }

    public init(offer: OfferEnded, reason: String) {
        self.offer = offer
        self.reason = reason
        recipients = [offer.delivererId]
    }
}

/// The two sides of a match, with what each needs to show the other.
public struct MatchParties: Codable, Sendable, Equatable {
    public var matchId: UUID
    public var orderId: UUID
    public var runId: UUID
    public var campus: String
    public var ordererId: UUID
    public var ordererName: String
    public var delivererId: UUID
    public var delivererName: String
    public var restaurant: PlaceReference
    public var destination: PlaceReference

    public init(
        matchId: UUID, orderId: UUID, runId: UUID, campus: String, ordererId: UUID, ordererName: String,
        delivererId: UUID, delivererName: String, restaurant: PlaceReference, destination: PlaceReference
    ) {
        self.matchId = matchId
        self.orderId = orderId
        self.runId = runId
        self.campus = campus
        self.ordererId = ordererId
        self.ordererName = ordererName
        self.delivererId = delivererId
        self.delivererName = delivererName
        self.restaurant = restaurant
        self.destination = destination
    }
}

/// A deliverer accepted: the orderer's "match update"; it opens the chat.
public struct MatchAccepted: Event, Equatable {
    public static let type = "match.accepted"
    public var match: MatchParties
    public var version: Int64
    /// The users it concerns: whose feeds it goes to.
    public var recipients: [UUID]
    public var notice: Notice?
    public var aggregateId: UUID { match.matchId }

    public init(match: MatchParties, version: Int64) {
        self.match = match
        self.version = version
        recipients = [match.ordererId, match.delivererId]
        notice = Notice(
            title: "Order accepted",
            body: "\(Notice.firstName(match.delivererName)) brings \(Notice.firstName(match.ordererName))'s order "
                + "from \(match.restaurant.name) to \(match.destination.name)")
    }
}

/// One side cancelled (`cancelledBy` `orderer` or `deliverer`); it closes the chat.
public struct MatchCancelled: Event, Equatable {
    public static let type = "match.cancelled"
    public var match: MatchParties
    public var cancelledBy: String
    public var version: Int64
    /// The users it concerns: whose feeds it goes to.
    public var recipients: [UUID]
    public var aggregateId: UUID { match.matchId }

    public init(match: MatchParties, cancelledBy: String, version: Int64) {
        self.match = match
        self.cancelledBy = cancelledBy
        self.version = version
        recipients = [match.ordererId, match.delivererId]
    }
}

/// Both sides marked the delivery complete; it closes the chat.
public struct MatchCompleted: Event, Equatable {
    public static let type = "match.completed"
    public var match: MatchParties
    public var version: Int64
    /// The users it concerns: whose feeds it goes to.
    public var recipients: [UUID]
    public var aggregateId: UUID { match.matchId }

    public init(match: MatchParties, version: Int64) {
        self.match = match
        self.version = version
        recipients = [match.ordererId, match.delivererId]
    }
}

/// No deliverer took the order in time.
public struct OrderExpired: Event, Equatable {
    public static let type = "order.expired"
    public var orderId: UUID
    public var ordererId: UUID
    public var version: Int64
    /// The users it concerns: whose feeds it goes to.
    public var recipients: [UUID]
    public var aggregateId: UUID { orderId }

    public init(orderId: UUID, ordererId: UUID, version: Int64) {
        self.orderId = orderId
        self.ordererId = ordererId
        self.version = version
        recipients = [ordererId]
    }
}
