import Contracts
import Foundation
import MatchingCore

/// The state machines of the delivery flow, and who may do what, without I/O. Every transition not listed is
/// refused with `MatchingError.conflict`, which clients see as 409.

/// A deliverer's check-in at a restaurant.
public enum RunStatus: String, Codable, Sendable, CaseIterable {
    case open
    /// Checked out by the deliverer.
    case closed
    /// Its window passed.
    case expired

    enum Action: Sendable, CaseIterable { case checkOut, expire }

    func after(_ action: Action) throws(MatchingError) -> RunStatus {
        switch (self, action) {
        case (.open, .checkOut): .closed
        case (.open, .expire): .expired
        default: throw .conflict("The run is \(rawValue).")
        }
    }

    var isOpen: Bool { self == .open }
}

/// An orderer's request.
public enum OrderStatus: String, Codable, Sendable, CaseIterable {
    /// No deliverer has it; a run that opens later is matched against it.
    case waiting
    /// Offered to one deliverer, who has not answered yet.
    case offered
    case matched
    case completed
    case cancelled
    case expired

    enum Action: Sendable, CaseIterable {
        case offer, offerEnded, accept, complete, cancel, expire
        /// A deliverer took it from the open list.
        case take
        /// The deliverer dropped the accepted order: it goes back to dispatch.
        case delivererCancelled
    }

    func after(_ action: Action) throws(MatchingError) -> OrderStatus {
        switch (self, action) {
        case (.waiting, .offer): .offered
        case (.offered, .offerEnded): .waiting
        case (.offered, .accept): .matched
        case (.waiting, .take), (.offered, .take): .matched
        case (.matched, .complete): .completed
        case (.waiting, .cancel), (.offered, .cancel), (.matched, .cancel): .cancelled
        case (.waiting, .expire), (.offered, .expire): .expired
        case (.matched, .delivererCancelled): .waiting
        default: throw .conflict("The order is \(rawValue).")
        }
    }

    var isFinished: Bool { self == .completed || self == .cancelled || self == .expired }
}

/// One order offered to one deliverer for a short window.
public enum OfferStatus: String, Codable, Sendable, CaseIterable {
    case pending
    case accepted
    case declined
    case expired
    /// The order or the run went away before the deliverer answered.
    case withdrawn

    enum Action: Sendable, CaseIterable { case accept, decline, expire, withdraw }

    func after(_ action: Action) throws(MatchingError) -> OfferStatus {
        switch (self, action) {
        case (.pending, .accept): .accepted
        case (.pending, .decline): .declined
        case (.pending, .expire): .expired
        case (.pending, .withdraw): .withdrawn
        default: throw .conflict("The offer is \(rawValue).")
        }
    }
}

/// An orderer and a deliverer agreed on an order.
public enum MatchStatus: String, Codable, Sendable, CaseIterable {
    case active
    case completed
    case cancelled

    enum Action: Sendable, CaseIterable { case complete, cancel }

    func after(_ action: Action) throws(MatchingError) -> MatchStatus {
        switch (self, action) {
        case (.active, .complete): .completed
        case (.active, .cancel): .cancelled
        default: throw .conflict("The match is \(rawValue).")
        }
    }
}

/// Which side of a match a caller is.
enum MatchSide: String, Codable, Sendable, CaseIterable {
    case orderer
    case deliverer

    /// What the match ended on this side's word does to its order: the orderer's ends it; the deliverer's sends it
    /// back to dispatch.
    var orderActionOnCancel: OrderStatus.Action {
        switch self {
        case .orderer: .cancel
        case .deliverer: .delivererCancelled
        }
    }
}

extension MatchStatus {
    /// Whether one side's completion has anything to mark: on an active match it has; a completed match's is a retry
    /// with nothing to do; a cancelled match's is refused.
    func needsCompletion() throws(MatchingError) -> Bool {
        switch self {
        case .active: true
        case .completed: false
        case .cancelled: throw .conflict("The match is \(rawValue).")
        }
    }

    /// A match is complete once both sides have said so.
    static func isComplete(ordererCompleted: Bool, delivererCompleted: Bool) -> Bool {
        ordererCompleted && delivererCompleted
    }
}

/// An order as its locked row holds it: what accepting, cancelling, expiring and dispatching decide on.
struct OrderState: Sendable, Equatable {
    var id: UUID
    var ordererId: UUID
    var ordererName: String
    var status: OrderStatus
    /// Any of them will do.
    var restaurantIds: [UUID]
    var destination: PlaceSummary
    var requestedRunId: UUID?
    var campus: String
    var items: String
    /// Its lifetime passed, by the database's clock; its timer may not have run yet.
    var isExpired = false

    /// What taking the order from the open list makes of it: refused (409) for the orderer's own, an order no longer
    /// waiting for a deliverer, a run at a restaurant the order does not name, and a run that is over or full.
    func taken(by delivererId: UUID, with run: Run, freeSeats: Int) throws(MatchingError) -> OrderStatus {
        guard ordererId != delivererId else { throw .conflict("That is your own order.") }
        let status = try status.after(.take)
        guard !isExpired else { throw .conflict("The order has expired.") }
        guard let restaurantId = run.restaurant.id, restaurantIds.contains(restaurantId) else {
            throw .conflict("Your run is at \(run.restaurant.name), which the order does not name.")
        }
        guard run.status.isOpen else { throw .conflict("Your run is \(run.status.rawValue).") }
        guard freeSeats > 0 else { throw .conflict("Your run is full.") }
        return status
    }
}

/// An offer as its locked row holds it.
struct OfferState: Sendable, Equatable {
    var id: UUID
    var orderId: UUID
    var runId: UUID
    var delivererId: UUID
    var status: OfferStatus
    /// Its window passed, by the database's clock; its timer may not have run yet.
    var isExpired: Bool
    var version: Int64

    /// What accepting the offer makes of it and of its order: refused (409) once the offer is answered or its window
    /// passed, the run is over or full, or the order is no longer offered, checked in that order.
    func accepted(order: OrderState, run: Run) throws(MatchingError) -> (offer: OfferStatus, order: OrderStatus) {
        let offer = try status.after(.accept)
        guard !isExpired else { throw .conflict("The offer has expired.") }
        guard run.status.isOpen else { throw .conflict("The run is \(run.status.rawValue).") }
        guard run.held < run.capacity else { throw .conflict("The run is full.") }
        return (offer, try order.status.after(.accept))
    }
}

extension Match {
    func isMember(_ userId: UUID) -> Bool { side(of: userId) != nil }

    func side(of userId: UUID) -> MatchSide? {
        userId == ordererId ? .orderer : userId == delivererId ? .deliverer : nil
    }

    /// The deliverer's position as the orderer sees it: only while the match is active.
    var sharedPosition: LivePosition? { status == .active ? delivererPosition : nil }
}

/// Who may see and do what, without I/O. Anyone else gets the same 404 as for something missing, so that an id
/// does not tell whether it exists.
enum DeliveryAccess {
    /// A create retried with the client's id gets the first result; an id someone else used is taken (409).
    static func checkRetry(ownerId: UUID, userId: UUID) throws(MatchingError) {
        guard ownerId == userId else { throw .conflict("That id is taken.") }
    }

    /// A run, to its deliverer.
    static func run(_ run: Run?, userId: UUID) throws(MatchingError) -> Run {
        guard let run, run.delivererId == userId else { throw .notFound("run") }
        return run
    }

    /// An order, to its orderer (`ordererId`, nil when there is no such order).
    static func order(_ order: Order?, ordererId: UUID?, userId: UUID) throws(MatchingError) -> Order {
        guard ordererId == userId, let order else { throw .notFound("order") }
        return order
    }

    /// An order's locked state, to its orderer.
    static func order(_ order: OrderState?, userId: UUID) throws(MatchingError) -> OrderState {
        guard let order, order.ordererId == userId else { throw .notFound("order") }
        return order
    }

    /// An offer, to its deliverer.
    static func offer(_ offer: OfferState?, userId: UUID) throws(MatchingError) -> OfferState {
        guard let offer, offer.delivererId == userId else { throw .notFound("offer") }
        return offer
    }

    /// An order of the open requests, to the deliverers of its campus; one that asks for a run is not among them.
    static func openOrder(_ order: OrderState?, campus: String) throws(MatchingError) -> OrderState {
        guard let order, order.campus == campus, order.requestedRunId == nil else { throw .notFound("order") }
        return order
    }

    /// A match, to its two members.
    static func match(_ match: Match?, userId: UUID) throws(MatchingError) -> Match {
        guard let match, match.isMember(userId) else { throw .notFound("match") }
        return match
    }

    /// The side a member of the match is on.
    static func side(in match: Match?, userId: UUID) throws(MatchingError) -> (match: Match, side: MatchSide) {
        guard let match, let side = match.side(of: userId) else { throw .notFound("match") }
        return (match, side)
    }

    /// A match whose position its deliverer reports: theirs alone, and only while it is active (409 after).
    static func positionMatch(_ match: Match?, userId: UUID) throws(MatchingError) -> Match {
        guard let match, match.delivererId == userId else { throw .notFound("match") }
        guard match.status == .active else {
            throw .conflict("The match is \(match.status.rawValue); its position is no longer shared.")
        }
        return match
    }

    /// The run an order asks for by id (`runCampus` is its campus): another deliverer's, at one of the order's
    /// restaurants, on the orderer's campus, else 404; still open, else 409.
    static func checkRequestedRun(
        _ run: Run?, runCampus: String?, restaurantIds: [UUID], ordererId: UUID, campus: String
    ) throws(MatchingError) {
        guard let run, let restaurantId = run.restaurant.id, restaurantIds.contains(restaurantId),
            run.delivererId != ordererId, runCampus == campus
        else {
            throw .notFound("run at that restaurant")
        }
        guard run.status.isOpen else { throw .conflict("That run is \(run.status.rawValue).") }
    }
}
