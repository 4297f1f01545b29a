import Contracts
import Foundation
import MatchingCore
import Messaging
import Postgres
import ServiceKit

/// The delivery flow's use cases. Each is one transaction: it locks rows through the repository, asks the rules,
/// writes, and appends its events, so that every change commits with its events, under row locks that make accept,
/// dispatch and the timers safe across replicas.
public struct DeliverySteps: Sendable {
    let database: PostgresPool
    let settings: DeliverySettings
    let positions: PositionSender

    public init(database: PostgresPool, settings: DeliverySettings, positions: PositionSender = .discarding) {
        self.database = database
        self.settings = settings
        self.positions = positions
    }

    /// Runs `body` in one transaction with the flow's repository on its connection.
    func transaction<T: Sendable>(
        durable: Bool = true, _ body: @escaping @Sendable (DeliveryPostgresRepository) throws -> T
    ) async throws -> T {
        try await database.transaction(durable: durable) { connection in
            try body(DeliveryPostgresRepository(connection: connection))
        }
    }

    /// Runs `body` on a connection outside a transaction, for what only reads.
    func read<T: Sendable>(_ body: @escaping @Sendable (DeliveryPostgresRepository) throws -> T) async throws -> T {
        try await database.withConnection { connection in try body(DeliveryPostgresRepository(connection: connection)) }
    }

    /// The steps the use cases share with the timers, inside the transaction of `repository`.
    func timerSteps(_ repository: DeliveryPostgresRepository) -> DeliveryTimerSteps {
        DeliveryTimerSteps(repository: repository, settings: settings)
    }

    // MARK: Runs

    /// Checks the caller in at a restaurant, heading to a building, and offers the run's seats to the orders waiting
    /// there. A retry with the same `id` returns the first run.
    public func openRun(
        id: UUID?, caller: Identity, restaurantId: UUID, destinationId: UUID, capacity: Int, minutes: Int
    ) async throws -> Run {
        try await transaction { repository in
            let steps = timerSteps(repository)
            try ReadModels.requireActive(caller.userId, on: repository.connection)
            if let existing = try repository.run(id: id) {
                try DeliveryAccess.checkRetry(ownerId: existing.delivererId, userId: caller.userId)
                return existing
            }
            let id = try steps.checkIn(
                caller, runId: id ?? UUID(), restaurantId: restaurantId, destinationId: destinationId,
                capacity: capacity, minutes: minutes)
            // A run that opens later is matched against the orders already waiting there.
            try steps.fillSeats(of: id)
            return try repository.run(id: id)!
        }
    }

    /// The caller checks out of their run: its pending offers are withdrawn and their orders dispatched again.
    func checkOut(runId: UUID, caller: Identity) async throws -> Run {
        try await transaction { repository in
            let run = try DeliveryAccess.run(try repository.lockRun(id: runId), userId: caller.userId)
            try timerSteps(repository).close(run, to: try run.status.after(.checkOut), reason: "checkedOut")
            return try repository.run(id: runId)!
        }
    }

    /// The restaurants of the campus with open runs.
    func restaurantsWithRuns(campus: String) async throws -> [RestaurantWithRuns] {
        try await read { repository in try repository.restaurantsWithRuns(campus: campus) }
    }

    /// The open runs at a restaurant the caller may see, nearest destination to `point` first when one is given (on
    /// the caller's campus, else 400 naming `lat`).
    func openRuns(restaurantId: UUID, caller: Identity, from point: GeoPoint?) async throws -> [Run] {
        if let point { try settings.campuses.require(point, of: caller.campus, field: "lat") }
        return try await read { repository in
            guard try repository.isRestaurant(restaurantId, campus: caller.campus) else {
                throw MatchingError.notFound("restaurant")
            }
            return try repository.openRuns(
                restaurantId: restaurantId, campus: caller.campus, viewerId: caller.userId, from: point)
        }
    }

    // MARK: Orders

    /// Places the caller's order for any of `restaurantIds` and offers it to the best run (the one it asks for, when
    /// it asks for one); one that asks for no run is also on the campus's open requests. A retry with the same `id`
    /// returns the first order.
    public func placeOrder(
        id: UUID?, caller: Identity, restaurantIds: [UUID], destination: OrderDestination, items: String, runId: UUID?
    ) async throws -> Order {
        try await transaction { repository in
            let steps = timerSteps(repository)
            try ReadModels.requireActive(caller.userId, on: repository.connection)
            if let id, let ordererId = try repository.orderOwner(id: id) {
                try DeliveryAccess.checkRetry(ownerId: ordererId, userId: caller.userId)
                return try repository.order(id: id)!
            }
            let id = id ?? UUID()
            let restaurantNames = try ReadModels.liveNames(
                of: restaurantIds, campus: caller.campus, kind: "restaurant", on: repository.connection)
            let restaurants = try restaurantIds.enumerated().map { index, restaurantId in
                try ReadModels.place(
                    restaurantId, in: restaurantNames,
                    what: restaurantIds.count == 1 ? "restaurant" : "restaurant (restaurantIds[\(index)])")
            }
            let destination = try steps.destination(destination, campus: caller.campus)
            if let runId {
                let isBlocked = try repository.isBlocked(delivererOf: runId, with: caller.userId)
                try DeliveryAccess.checkRequestedRun(
                    isBlocked ? nil : try repository.run(id: runId), runCampus: try repository.campus(ofRun: runId),
                    restaurantIds: restaurantIds, ordererId: caller.userId, campus: caller.campus)
            }
            // NB: the orderer's lock, taken before their open orders are counted, serialises their orders, so that
            // two at once cannot both pass the cap.
            try repository.lockOrders(of: caller.userId)
            try DeliveryRules.checkOpenOrders(try repository.countOpenOrders(ordererId: caller.userId))
            let expiresAt = Date().addingTimeInterval(settings.orderLifetime)
            try repository.insertOrder(
                id: id, orderer: caller, restaurantIds: restaurantIds, destination: destination, items: items,
                runId: runId, expiresAt: expiresAt)
            try steps.addTimer(.order, id, due: expiresAt)
            try Outbox.append(
                OrderPlaced(
                    orderId: id, campus: caller.campus, ordererId: caller.userId, restaurants: restaurants,
                    destination: destination.reference, items: items, expiresAt: expiresAt, version: 1),
                on: repository.connection)
            if runId == nil {
                try Outbox.append(
                    OrderOpened(
                        orderId: id, campus: caller.campus, ordererId: caller.userId, expiresAt: expiresAt, version: 1),
                    on: repository.connection)
            }
            try steps.dispatch(orderId: id)
            return try repository.order(id: id)!
        }
    }

    /// A page of the campus's open requests for a deliverer, after the page whose `next` is `after` (400 naming
    /// `after` for anything else), with distances from `point` on the caller's campus (else 400 naming `lat`).
    public func openOrders(
        caller: Identity, from point: GeoPoint?, restaurantId: UUID?, limit: Int, after: String?
    ) async throws -> OpenOrderPage {
        if let point { try settings.campuses.require(point, of: caller.campus, field: "lat") }
        let cursor = try after.map(OpenOrderCursor.init(text:))
        return try await read { repository in
            try repository.openOrders(
                campus: caller.campus, callerId: caller.userId, from: point, restaurantId: restaurantId, limit: limit,
                after: cursor)
        }
    }

    /// The order, to its orderer only.
    func order(id: UUID, caller: Identity) async throws -> Order {
        try await transaction { repository in
            let ordererId = try repository.orderOwner(id: id)
            return try DeliveryAccess.order(try repository.order(id: id), ordererId: ordererId, userId: caller.userId)
        }
    }

    /// The orderer cancels their order: a matched one's match ends on their word; any other's pending offer is
    /// withdrawn.
    func cancelOrder(id: UUID, caller: Identity) async throws -> Order {
        try await transaction { repository in
            let steps = timerSteps(repository)
            let order = try DeliveryAccess.order(try repository.lockOrder(id: id), userId: caller.userId)
            if order.status == .matched, let match = try repository.lockActiveMatch(orderId: id) {
                try steps.cancel(match, by: .orderer)
            } else {
                try steps.withdrawPendingOffer(orderId: id, reason: "orderCancelled")
                try repository.setOrderStatus(id, try order.status.after(.cancel))
            }
            return try repository.order(id: id)!
        }
    }

    // MARK: Offers

    /// The offer's deliverer takes the order: at most one accepted deliverer per order, never over capacity.
    public func accept(offerId: UUID, caller: Identity) async throws -> Match {
        try await transaction { repository in
            let steps = timerSteps(repository)
            let offer = try DeliveryAccess.offer(try repository.lockOffer(id: offerId), userId: caller.userId)
            // NB: offer, then order, then run; a path that locks them in another order can deadlock with this one,
            // and the transaction helper runs the loser again.
            guard let order = try repository.lockOrder(id: offer.orderId),
                let run = try repository.lockRun(id: offer.runId)
            else { throw MatchingError.notFound("offer") }
            let accepted = try offer.accepted(order: order, run: run)
            try repository.setOfferStatus(offerId, accepted.offer)
            return try steps.makeMatch(order: order, status: accepted.order, run: run).match
        }
    }

    /// The offer's deliverer says no: the order goes to the next run, and the run's seat to the next order.
    public func decline(offerId: UUID, caller: Identity) async throws -> Offer {
        try await transaction { repository in
            let steps = timerSteps(repository)
            let offer = try DeliveryAccess.offer(try repository.lockOffer(id: offerId), userId: caller.userId)
            guard let order = try repository.lockOrder(id: offer.orderId) else {
                throw MatchingError.notFound("offer")
            }
            let declined = try offer.status.after(.decline)
            try steps.endOffer(offer, as: declined, order: order)
            try Outbox.append(OfferDeclined(offer: offer.ended), on: repository.connection)
            try steps.dispatch(orderId: order.id)
            try steps.fillSeats(of: offer.runId)
            return Offer(id: offer.id, orderId: offer.orderId, runId: offer.runId, status: declined, expiresAt: Date())
        }
    }
}
