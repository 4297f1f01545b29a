import Contracts
import Foundation
import MatchingCore
import Messaging
import Postgres
import ServiceKit

/// Where a deliverer without an open run checks in when they take an order from the open requests.
public struct TakeCheckIn: Sendable, Equatable {
    /// One of the order's restaurants (400 naming `restaurantId` otherwise).
    public var restaurantId: UUID?
    /// Where the deliverer is: the nearest of the order's restaurants to it when they name none.
    public var position: GeoPoint?

    public init(restaurantId: UUID? = nil, position: GeoPoint? = nil) {
        self.restaurantId = restaurantId
        self.position = position
    }
}

extension DeliverySteps {
    /// The caller takes an order from the open requests with their open run (`runId`, when they say which): the
    /// same match as an accepted offer's. A caller with no open run is checked in at one of the order's restaurants
    /// (`checkIn`), heading to the order's destination, in the same transaction: one request, one tap. Whichever of
    /// a take and an offer's accept comes first wins; the other is refused (409). The order's pending offer, if any,
    /// is withdrawn.
    public func take(
        orderId: UUID, runId: UUID?, checkIn: TakeCheckIn = TakeCheckIn(), caller: Identity
    ) async throws -> Match {
        if let position = checkIn.position {
            try settings.campuses.require(position, of: caller.campus, field: "position")
        }
        return try await transaction { repository in
            let steps = timerSteps(repository)
            // NB: offer, then order, then run, as accepting locks them, so that the two do not deadlock.
            try repository.lockPendingOffers(orderId: orderId)
            let order = try DeliveryAccess.openOrder(try repository.lockOrder(id: orderId), campus: caller.campus)
            guard try !ReadModels.isBlocked(order.ordererId, caller.userId, on: repository.connection) else {
                throw MatchingError.notFound("order")
            }
            if let restaurantId = checkIn.restaurantId, !order.restaurantIds.contains(restaurantId) {
                throw MatchingError.invalid(field: "restaurantId", "restaurantId is one of the order's restaurants.")
            }
            let runs = try repository.openRuns(delivererId: caller.userId, campus: caller.campus)
            let candidateId: UUID
            if let runId {
                guard runs.contains(where: { $0.id == runId }) else {
                    throw MatchingError.notFound("open run of yours")
                }
                candidateId = runId
            } else if let open = runs.first {
                candidateId = open.id
            } else {
                try ReadModels.requireActive(caller.userId, on: repository.connection)
                candidateId = try steps.checkIn(
                    caller, runId: UUID(),
                    restaurantId: try checkIn.restaurantId
                        ?? repository.nearest(of: order.restaurantIds, to: checkIn.position) ?? order.restaurantIds[0],
                    destinationId: try steps.building(for: order.destination, campus: caller.campus),
                    capacity: try DeliveryRules.capacity(nil),
                    minutes: try DeliveryRules.minutes(nil, settings: settings))
            }
            guard let run = try repository.lockRun(id: candidateId) else { throw MatchingError.notFound("run") }
            // The order's own pending offer gives its seat back before the run's free seats are counted.
            let withdrawn = try repository.withdrawPendingOffers(orderId: orderId)
            let status = try order.taken(
                by: caller.userId, with: run,
                freeSeats: try repository.freeSeats(runId: run.id))
            for (offer, _) in withdrawn {
                try Outbox.append(OfferWithdrawn(offer: offer, reason: "orderTaken"), on: repository.connection)
            }
            let (match, version) = try steps.makeMatch(order: order, status: status, run: run)
            try Outbox.append(
                OrderTaken(
                    orderId: order.id, matchId: match.id, ordererId: order.ordererId, delivererId: caller.userId,
                    delivererName: match.delivererName, version: version),
                on: repository.connection)
            for (_, otherRunId) in withdrawn where otherRunId != run.id {
                try steps.fillSeats(of: otherRunId)
            }
            return match
        }
    }
}

extension DeliveryTimerSteps {
    /// Opens a run of the caller's at a live restaurant of their campus, heading to a live building of it (404 for
    /// either otherwise; 409 when they have an open run already), with its closing timer and `run.opened`; answers
    /// its id. The caller fills its seats.
    func checkIn(
        _ caller: Identity, runId: UUID, restaurantId: UUID, destinationId: UUID, capacity: Int, minutes: Int
    ) throws -> UUID {
        let restaurant = try ReadModels.place(
            restaurantId,
            in: try ReadModels.liveNames(of: [restaurantId], campus: caller.campus, kind: "restaurant", on: connection),
            what: "restaurant")
        let destination = try ReadModels.place(
            destinationId,
            in: try ReadModels.liveNames(of: [destinationId], campus: caller.campus, kind: "building", on: connection),
            what: "destination building")
        let closesAt = Date().addingTimeInterval(TimeInterval(minutes * 60))
        guard
            try repository.insertRun(
                id: runId, deliverer: caller, restaurantId: restaurantId, destinationId: destinationId,
                capacity: capacity, closesAt: closesAt)
        else { throw MatchingError.conflict("You already have an open run; check out of it first.") }
        try addTimer(.run, runId, due: closesAt)
        try Outbox.append(
            RunOpened(
                runId: runId, campus: caller.campus, delivererId: caller.userId, restaurant: restaurant,
                destination: destination, capacity: capacity, closesAt: closesAt, version: 1),
            on: connection)
        return runId
    }

    /// The building a run heads to for an order: the order's own, or the campus's nearest to the point it gave (409
    /// when the campus has no building).
    func building(for destination: PlaceSummary, campus: String) throws -> UUID {
        if let id = destination.id { return id }
        let point = GeoPoint(lat: destination.latitude, lon: destination.longitude)
        guard let nearest = try repository.nearestBuilding(to: point, campus: campus, within: nil) else {
            throw MatchingError.conflict("Your campus has no building to head to; check in at the restaurant first.")
        }
        return nearest.id
    }
}
