import Contracts
import Foundation
import MatchingCore
import Messaging
import Postgres

/// The flow's steps inside a transaction already open, which the use cases and the timers share: dispatching orders
/// to runs, closing runs, ending offers and matches, and what each timer is due for.
struct DeliveryTimerSteps {
    let repository: DeliveryPostgresRepository
    let settings: DeliverySettings

    init(repository: DeliveryPostgresRepository, settings: DeliverySettings) {
        self.repository = repository
        self.settings = settings
    }

    init(connection: PostgresConnection, settings: DeliverySettings) {
        self.init(repository: DeliveryPostgresRepository(connection: connection), settings: settings)
    }

    /// The transaction's connection, for the outbox and the shared tables.
    var connection: PostgresConnection { repository.connection }

    /// An order's destination: a live building of the campus (404), or a point on the campus (400 naming
    /// `destination` and the campus) named after the building nearest it.
    func destination(_ destination: OrderDestination, campus: String) throws -> PlaceSummary {
        switch destination {
        case .building(let id):
            guard let building = try repository.building(id, campus: campus) else {
                throw MatchingError.notFound("destination building")
            }
            return building
        case .point(let point):
            try settings.campuses.require(point, of: campus, field: "destination")
            let near = try repository.nearestBuilding(to: point, campus: campus, within: 500)?.name
            return PlaceSummary(
                id: nil, name: near.map { "Near \($0)" } ?? "A point on the campus", latitude: point.lat,
                longitude: point.lon)
        }
    }

    // MARK: Dispatch

    /// Offers the seats a run has free (it opened, or an offer on it ended, or a match on it did) to the orders waiting
    /// at its restaurant, oldest first.
    func fillSeats(of runId: UUID) throws {
        guard try repository.freeSeats(runId: runId) > 0, let run = try repository.restaurantAndCampus(ofRun: runId)
        else { return }
        for orderId in try repository.lockWaitingOrders(restaurantId: run.restaurantId, campus: run.campus) {
            guard try repository.freeSeats(runId: runId) > 0 else { break }
            try dispatch(orderId: orderId)
        }
    }

    /// Offers a waiting order to the best run, or leaves it waiting when there is none.
    func dispatch(orderId: UUID) throws {
        guard let order = try repository.lockOrder(id: orderId), let offered = try? order.status.after(.offer) else {
            return
        }
        let radius = Dispatch.radius(requestedRunId: order.requestedRunId, matchRadius: settings.matchRadiusMeters)
        guard let chosen = Dispatch.choose(try repository.dispatchCandidates(orderId: orderId), radius: radius),
            let runId = UUID(uuidString: chosen.runId), let run = try repository.lockRun(id: runId),
            try repository.freeSeats(runId: runId) > 0
        else { return }
        let offerId = UUID()
        let expiresAt = Date().addingTimeInterval(settings.offerWindow)
        try repository.insertOffer(
            id: offerId, orderId: orderId, runId: runId, delivererId: run.delivererId, expiresAt: expiresAt)
        try addTimer(.offer, offerId, due: expiresAt)
        try repository.queueOrderStatus(orderId, offered)
        try Outbox.append(
            OfferMade(
                offerId: offerId, orderId: orderId, runId: runId, delivererId: run.delivererId,
                ordererId: order.ordererId, ordererName: order.ordererName, restaurant: run.restaurant.reference,
                destination: order.destination.reference,
                items: order.items, expiresAt: expiresAt, version: 1), on: connection)
    }

    /// Closes a run (checked out or expired): its pending offers are withdrawn and their orders dispatched again.
    func close(_ run: Run, to status: RunStatus, reason: String) throws {
        let version = try repository.setRunStatus(run.id, status)
        let orphaned = try repository.withdrawPendingOffers(runId: run.id)
        try Outbox.append(
            RunClosed(runId: run.id, delivererId: run.delivererId, reason: reason, version: version), on: connection)
        for offer in orphaned {
            try Outbox.append(OfferWithdrawn(offer: offer, reason: "runClosed"), on: connection)
            try repository.setOrderStatus(offer.orderId, .waiting)
            try dispatch(orderId: offer.orderId)
        }
    }

    // MARK: Offers and matches

    /// The match an accepted offer or a take makes of an order (`status`, its status after) and a run: a seat held,
    /// `match.accepted` and the chat opened. Answers the match and the order's new version.
    func makeMatch(order: OrderState, status: OrderStatus, run: Run) throws -> (match: Match, orderVersion: Int64) {
        try repository.holdSeat(runId: run.id)
        let version = try repository.setOrderStatus(order.id, status)!
        let matchId = UUID()
        try repository.insertMatch(id: matchId, order: order, delivererId: run.delivererId, runId: run.id)
        let match = try repository.match(id: matchId)!
        try Outbox.append(MatchAccepted(match: match.parties(campus: order.campus), version: 1), on: connection)
        try match.flowMatch(campus: order.campus).announceOpened(on: connection)
        return (match, version)
    }

    /// Withdraws the offer of an order that is going away (`reason`), telling its deliverer; its seat goes to the
    /// orders waiting at the restaurant.
    func withdrawPendingOffer(orderId: UUID, reason: String) throws {
        for (offer, runId) in try repository.withdrawPendingOffers(orderId: orderId) {
            try Outbox.append(OfferWithdrawn(offer: offer, reason: reason), on: connection)
            try fillSeats(of: runId)
        }
    }

    /// Ends an offer without a match (`status` declined or expired); its order, still offered, waits again.
    func endOffer(_ offer: OfferState, as status: OfferStatus, order: OrderState) throws {
        try repository.setOfferStatus(offer.id, status)
        if let waiting = try? order.status.after(.offerEnded) {
            try repository.setOrderStatus(order.id, waiting)
        }
    }

    /// Ends a match on one side's word: the orderer's ends the order; the deliverer's sends it back to dispatch.
    func cancel(_ match: Match, by side: MatchSide) throws {
        let status = try match.status.after(.cancel)
        guard let order = try repository.lockOrder(id: match.orderId) else { throw MatchingError.notFound("match") }
        _ = try repository.lockRun(id: match.runId)
        let version = try repository.endMatch(match.id, as: status)
        try repository.releaseSeat(runId: match.runId)
        try Outbox.append(
            MatchCancelled(match: match.parties(campus: order.campus), cancelledBy: side.rawValue, version: version),
            on: connection)
        try match.flowMatch(campus: order.campus).announceClosed(.cancelled, version: version, on: connection)
        try repository.setOrderStatus(order.id, try order.status.after(side.orderActionOnCancel))
        if side == .deliverer {
            try dispatch(orderId: order.id)
        }
        try fillSeats(of: match.runId)
    }

    // MARK: Blocks

    /// One of two students blocked the other: their active matches end (with `match.closed` reason `blocked`, and the
    /// order back to dispatch, which offers it to no one in a block with its orderer), and the offers between them are
    /// withdrawn and their orders dispatched again.
    func closeBetween(_ a: UUID, _ b: UUID) throws {
        for match in try repository.lockActiveMatches(between: a, b) {
            guard let order = try repository.lockOrder(id: match.orderId) else { continue }
            _ = try repository.lockRun(id: match.runId)
            let version = try repository.endMatch(match.id, as: try match.status.after(.cancel))
            try repository.releaseSeat(runId: match.runId)
            try Outbox.append(
                MatchCancelled(match: match.parties(campus: order.campus), cancelledBy: "blocked", version: version),
                on: connection)
            try match.flowMatch(campus: order.campus).announceClosed(.blocked, version: version, on: connection)
            try repository.setOrderStatus(order.id, try order.status.after(.delivererCancelled))
            try dispatch(orderId: order.id)
            try fillSeats(of: match.runId)
        }
        for orderId in try repository.ordersOffered(between: a, b) {
            guard let order = try repository.lockOrder(id: orderId) else { continue }
            try withdrawPendingOffer(orderId: orderId, reason: "blocked")
            if let waiting = try? order.status.after(.offerEnded) {
                try repository.setOrderStatus(orderId, waiting)
            }
            try dispatch(orderId: orderId)
        }
    }

    // MARK: Timers

    /// `position` is `PositionPacing.timerKind`.
    enum TimerKind: String, CaseIterable { case offer, run, order, position }

    func addTimer(_ kind: TimerKind, _ target: UUID, due: Date) throws {
        try Timers.add(flow: DeliveryFlow.name, kind: kind.rawValue, target: target, due: due, on: connection)
    }

    /// Does what a timer is due for; a position timer answers the frame to send. A timer whose offer, run or order
    /// has moved on does nothing.
    func timerIsDue(_ kind: TimerKind, _ target: UUID) throws -> PendingFrame? {
        switch kind {
        case .offer: try expireOffer(target)
        case .run: try expireRun(target)
        case .order: try expireOrder(target)
        case .position:
            return try PositionPacing.takePending(
                table: "matches", id: target, flow: DeliveryFlow.name, on: connection
            ) {
                try latestPositionFrame(target)
            }
        }
        return nil
    }

    private func expireOffer(_ id: UUID) throws {
        guard let offer = try repository.lockOffer(id: id), let expired = try? offer.status.after(.expire),
            let order = try repository.lockOrder(id: offer.orderId)
        else { return }
        try endOffer(offer, as: expired, order: order)
        try Outbox.append(OfferExpired(offer: offer.ended), on: connection)
        try dispatch(orderId: order.id)
        try fillSeats(of: offer.runId)
    }

    private func expireRun(_ id: UUID) throws {
        guard let run = try repository.lockRun(id: id), let expired = try? run.status.after(.expire) else { return }
        try close(run, to: expired, reason: "expired")
    }

    private func expireOrder(_ id: UUID) throws {
        guard let order = try repository.lockOrder(id: id), let expired = try? order.status.after(.expire) else {
            return
        }
        try withdrawPendingOffer(orderId: id, reason: "orderExpired")
        let version = try repository.setOrderStatus(id, expired)!
        try Outbox.append(OrderExpired(orderId: id, ordererId: order.ordererId, version: version), on: connection)
    }

    /// The latest position of a match's deliverer, as a frame to its orderer, while the match is active.
    private func latestPositionFrame(_ matchId: UUID) throws -> PendingFrame? {
        guard let match = try repository.match(id: matchId), let position = match.sharedPosition else { return nil }
        return PendingFrame(.init(matchId: matchId, position: position), to: match.ordererId)
    }
}

extension OfferState {
    /// The offer as its end's event tells it, at the version its ending gives it.
    var ended: OfferEnded {
        OfferEnded(offerId: id, orderId: orderId, delivererId: delivererId, version: version + 1)
    }
}

extension PlaceSummary {
    var reference: PlaceReference { PlaceReference(placeId: id, name: name) }
}

extension Match {
    /// The match as every flow announces it, for its chat.
    func flowMatch(campus: String) -> FlowMatch {
        FlowMatch(
            id: id, flow: DeliveryFlow.name, campus: campus,
            members: [
                MatchMember(userId: ordererId, name: ordererName, role: MatchSide.orderer.rawValue),
                MatchMember(userId: delivererId, name: delivererName, role: MatchSide.deliverer.rawValue),
            ],
            subject: "\(items.split(whereSeparator: \.isNewline).first?.prefix(50) ?? "") to \(destination.name)")
    }

    /// The match as its own events tell it.
    func parties(campus: String) -> MatchParties {
        MatchParties(
            matchId: id, orderId: orderId, runId: runId, campus: campus, ordererId: ordererId, ordererName: ordererName,
            delivererId: delivererId, delivererName: delivererName, restaurant: restaurant.reference,
            destination: destination.reference)
    }
}
