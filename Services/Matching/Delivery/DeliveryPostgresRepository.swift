import Contracts
import Foundation
import Logging
import MatchingCore
import Messaging
import Postgres
import ServiceKit

/// The delivery flow's data in matching's database: the only file with its SQL. Every change commits with its
/// events in one transaction, under row locks that make accept, dispatch and the timers safe across replicas.
public struct DeliveryPostgresRepository: Sendable {
    let database: PostgresPool
    let settings: DeliverySettings
    let positions: PositionSender

    public init(database: PostgresPool, settings: DeliverySettings, positions: PositionSender = .discarding) {
        self.database = database
        self.settings = settings
        self.positions = positions
    }

    private func transaction<T: Sendable>(
        durable: Bool = true, _ body: @escaping @Sendable (DeliveryStore) throws -> T
    ) async throws -> T {
        let settings = settings
        return try await database.transaction(durable: durable) { connection in
            try body(DeliveryStore(connection: connection, settings: settings))
        }
    }

    // MARK: Runs

    public func openRun(
        id: UUID?, caller: Identity, restaurantId: UUID, destinationId: UUID, capacity: Int, minutes: Int
    ) async throws -> Run {
        try await transaction { store in
            if let id, let existing = try store.run(id: id) {
                guard existing.delivererId == caller.userId else { throw MatchingError.conflict("That id is taken.") }
                return existing
            }
            return try store.openRun(
                id: id ?? UUID(), caller: caller, restaurantId: restaurantId, destinationId: destinationId,
                capacity: capacity, minutes: minutes)
        }
    }

    func checkOut(runId: UUID, caller: Identity) async throws -> Run {
        try await transaction { store in
            guard let run = try store.run(id: runId, lock: true), run.delivererId == caller.userId else {
                throw MatchingError.notFound("run")
            }
            try store.close(run, to: try run.status.after(.checkOut), reason: "checkedOut")
            return try store.run(id: runId)!
        }
    }

    func restaurantsWithRuns(campus: String) async throws -> [RestaurantWithRuns] {
        try await database.query(
            """
            SELECT p.id, p.name, p.latitude, p.longitude, count(*) AS runs, sum(r.capacity - r.held) AS seats
            FROM runs r JOIN places p ON p.id = r.restaurant_id
            WHERE r.campus = \(campus) AND r.status = 'open' AND r.closes_at > now()
            GROUP BY p.id, p.name, p.latitude, p.longitude ORDER BY p.name
            """
        ).map { row in
            RestaurantWithRuns(
                restaurant: try PlaceSummary(row: row, prefix: ""), openRuns: try row.decode("runs"),
                freeSeats: try row.decode("seats"))
        }
    }

    /// The open runs at a restaurant, nearest destination to `point` first when one is given.
    func openRuns(restaurantId: UUID, campus: String, from point: (latitude: Double, longitude: Double)?) async throws
        -> [Run]
    {
        let settings = settings
        return try await database.withConnection { connection in
            let store = DeliveryStore(connection: connection, settings: settings)
            return try store.runs(
                where:
                    "r.restaurant_id = \(restaurantId) AND r.campus = \(campus) AND r.status = 'open' AND r.closes_at > now()",
                from: point)
        }
    }

    // MARK: Orders

    public func placeOrder(
        id: UUID?, caller: Identity, restaurantId: UUID, destinationId: UUID, items: String, runId: UUID?
    ) async throws -> Order {
        try await transaction { store in
            if let id, let existing = try store.orderOwner(id: id) {
                guard existing == caller.userId else { throw MatchingError.conflict("That id is taken.") }
                return try store.order(id: id)!
            }
            return try store.placeOrder(
                id: id ?? UUID(), caller: caller, restaurantId: restaurantId, destinationId: destinationId,
                items: items,
                runId: runId)
        }
    }

    /// The order, to its orderer only.
    func order(id: UUID, caller: Identity) async throws -> Order {
        try await transaction { store in
            guard try store.orderOwner(id: id) == caller.userId, let order = try store.order(id: id) else {
                throw MatchingError.notFound("order")
            }
            return order
        }
    }

    func cancelOrder(id: UUID, caller: Identity) async throws -> Order {
        try await transaction { store in
            guard let state = try store.lockOrder(id: id), state.ordererId == caller.userId else {
                throw MatchingError.notFound("order")
            }
            if state.status == .matched, let match = try store.activeMatch(orderId: id) {
                try store.cancel(match, by: .orderer)
            } else {
                try store.withdrawPendingOffer(orderId: id, reason: "orderCancelled")
                try store.setOrderStatus(id, try state.status.after(.cancel))
            }
            return try store.order(id: id)!
        }
    }

    // MARK: Offers

    public func accept(offerId: UUID, caller: Identity) async throws -> Match {
        try await transaction { store in try store.accept(offerId: offerId, caller: caller) }
    }

    public func decline(offerId: UUID, caller: Identity) async throws -> Offer {
        try await transaction { store in try store.decline(offerId: offerId, caller: caller) }
    }

    // MARK: Matches

    /// What the caller has under way on their campus: open runs, orders not yet over, active matches on either side.
    func current(caller: Identity) async throws -> DeliveryUnderWay {
        try await transaction { store in
            let ids = { (sql: SQL) throws -> [UUID] in try store.connection.query(sql).map { try $0.decode("id") } }
            let orders = try ids(
                """
                SELECT id FROM orders
                WHERE orderer_id = \(caller.userId) AND campus = \(caller.campus)
                    AND status IN ('waiting', 'offered', 'matched')
                ORDER BY created_at
                """)
            let matches = try ids(
                """
                SELECT id FROM matches
                WHERE (orderer_id = \(caller.userId) OR deliverer_id = \(caller.userId)) AND campus = \(caller.campus)
                    AND status = 'active'
                ORDER BY created_at
                """)
            return DeliveryUnderWay(
                runs: try store.runs(
                    where: "r.deliverer_id = \(caller.userId) AND r.campus = \(caller.campus) AND r.status = 'open'",
                    from: nil),
                orders: try orders.compactMap { try store.order(id: $0) },
                matches: try matches.compactMap { try store.match(id: $0) })
        }
    }

    func match(id: UUID, caller: Identity) async throws -> Match {
        try await transaction { store in
            guard let match = try store.match(id: id), match.isMember(caller.userId) else {
                throw MatchingError.notFound("match")
            }
            return match
        }
    }

    func cancelMatch(id: UUID, caller: Identity) async throws -> Match {
        try await transaction { store in
            guard let match = try store.match(id: id, lock: true), let side = match.side(of: caller.userId) else {
                throw MatchingError.notFound("match")
            }
            try store.cancel(match, by: side)
            return try store.match(id: id)!
        }
    }

    public func completeMatch(id: UUID, caller: Identity) async throws -> Match {
        try await transaction { store in
            guard let match = try store.match(id: id, lock: true), let side = match.side(of: caller.userId) else {
                throw MatchingError.notFound("match")
            }
            try store.complete(match, by: side)
            return try store.match(id: id)!
        }
    }

    /// The deliverer's latest position on their active match, kept until it ends; it goes to the orderer at most once
    /// a second (the latest always). Anyone but the deliverer gets 404; a match that is over, 409.
    public func reportPosition(_ point: GeoPoint, matchId: UUID, caller: Identity) async throws -> Match {
        let (match, frame) = try await transaction(durable: false) { store in
            try store.reportPosition(point, matchId: matchId, caller: caller)
        }
        // NB: sent once committed, so that a frame never shows a position the match does not.
        if let frame {
            positions.send(frame.payload, to: frame.receiver)
            await PositionPacing.markSent(table: "matches", id: matchId, in: database)
        }
        return match
    }
}

/// The flow's steps on one connection inside an open transaction.
struct DeliveryStore {
    let connection: PostgresConnection
    let settings: DeliverySettings

    func place(_ id: UUID, campus: String, kind: String, what: String) throws -> PlaceReference {
        try ReadModels.place(id, campus: campus, kind: kind, what: what, on: connection)
    }

    // MARK: Runs

    func openRun(id: UUID, caller: Identity, restaurantId: UUID, destinationId: UUID, capacity: Int, minutes: Int)
        throws -> Run
    {
        let restaurant = try place(restaurantId, campus: caller.campus, kind: "restaurant", what: "restaurant")
        let destination = try place(
            destinationId, campus: caller.campus, kind: "building", what: "destination building")
        let closesAt = Date().addingTimeInterval(TimeInterval(minutes * 60))
        do {
            try connection.query(
                """
                INSERT INTO runs (id, deliverer_id, deliverer_name, campus, restaurant_id, destination_id, capacity, status, closes_at)
                VALUES (\(id), \(caller.userId), \(caller.name), \(caller.campus), \(restaurantId), \(destinationId),
                    \(capacity), 'open', \(closesAt))
                """)
        } catch let error as PostgresError where error.isUniqueViolation {
            throw MatchingError.conflict("You already have an open run; check out of it first.")
        }
        try addTimer(.run, id, due: closesAt)
        try Outbox.append(
            RunOpened(
                runId: id, campus: caller.campus, delivererId: caller.userId, restaurant: restaurant,
                destination: destination, capacity: capacity, closesAt: closesAt, version: 1), on: connection)
        // A run that opens later is matched against the orders already waiting there.
        try fillSeats(of: id)
        return try run(id: id)!
    }

    func run(id: UUID, lock: Bool = false) throws -> Run? {
        try runs(where: "r.id = \(id)", from: nil, lock: lock).first
    }

    func runs(where condition: SQL, from point: (latitude: Double, longitude: Double)?, lock: Bool = false) throws
        -> [Run]
    {
        let distance: SQL =
            point.map { "distance_meters(\($0.latitude), \($0.longitude), d.latitude, d.longitude)" }
            ?? "NULL::double precision"
        return try connection.query(
            """
            SELECT r.id, r.deliverer_id, coalesce(u.name, r.deliverer_name) AS deliverer_name, r.capacity, r.held,
                r.status, r.closes_at, \(distance) AS distance,
                p.id AS r_id, p.name AS r_name, p.latitude AS r_latitude, p.longitude AS r_longitude,
                d.id AS d_id, d.name AS d_name, d.latitude AS d_latitude, d.longitude AS d_longitude
            FROM runs r JOIN places p ON p.id = r.restaurant_id JOIN places d ON d.id = r.destination_id
            LEFT JOIN users u ON u.id = r.deliverer_id
            WHERE \(condition)
            ORDER BY distance NULLS LAST, r.created_at
            \(unescaped: lock ? "FOR UPDATE OF r" : "")
            """
        ).map { row in
            Run(
                id: try row.decode("id"), delivererId: try row.decode("deliverer_id"),
                delivererName: try row.decode("deliverer_name"), restaurant: try PlaceSummary(row: row, prefix: "r_"),
                destination: try PlaceSummary(row: row, prefix: "d_"), capacity: try row.decode("capacity"),
                held: try row.decode("held"), status: try RunStatus(text: try row.decode("status")),
                closesAt: try row.decode("closes_at"), distanceMeters: try row.decode("distance"))
        }
    }

    func freeSeats(runId: UUID) throws -> Int {
        try connection.query(
            """
            SELECT r.capacity - r.held - (SELECT count(*) FROM offers o WHERE o.run_id = r.id AND o.status = 'pending') AS free
            FROM runs r WHERE r.id = \(runId) AND r.status = 'open'
            """
        ).first?.decode("free") ?? 0
    }

    /// Offers the seats a run has free (it opened, or an offer on it ended, or a match on it did) to the orders waiting
    /// at its restaurant, oldest first.
    func fillSeats(of runId: UUID) throws {
        guard try freeSeats(runId: runId) > 0,
            let run = try connection.query("SELECT restaurant_id, campus FROM runs WHERE id = \(runId)").first
        else { return }
        let waiting = try connection.query(
            """
            SELECT id FROM orders
            WHERE restaurant_id = \(try run.decode("restaurant_id", as: UUID.self))
              AND campus = \(try run.decode("campus", as: String.self)) AND status = 'waiting'
            ORDER BY created_at LIMIT 20 FOR UPDATE SKIP LOCKED
            """)
        for row in waiting {
            guard try freeSeats(runId: runId) > 0 else { break }
            try dispatch(orderId: try row.decode("id"))
        }
    }

    /// Closes a run (checked out or expired): its pending offers are withdrawn and their orders dispatched again.
    func close(_ run: Run, to status: RunStatus, reason: String) throws {
        let version: Int64 = try connection.query(
            "UPDATE runs SET status = \(status.rawValue), version = version + 1 WHERE id = \(run.id) RETURNING version"
        ).first!.decode("version")
        let orphaned = try connection.query(
            """
            UPDATE offers SET status = 'withdrawn', version = version + 1 WHERE run_id = \(run.id) AND status = 'pending'
            RETURNING id, order_id, deliverer_id, version
            """)
        try Outbox.append(
            RunClosed(runId: run.id, delivererId: run.delivererId, reason: reason, version: version), on: connection)
        for row in orphaned {
            let offer = try OfferEnded(withdrawn: row)
            try Outbox.append(OfferWithdrawn(offer: offer, reason: "runClosed"), on: connection)
            try setOrderStatus(offer.orderId, .waiting)
            try dispatch(orderId: offer.orderId)
        }
    }

    // MARK: Orders

    func placeOrder(id: UUID, caller: Identity, restaurantId: UUID, destinationId: UUID, items: String, runId: UUID?)
        throws -> Order
    {
        let restaurant = try place(restaurantId, campus: caller.campus, kind: "restaurant", what: "restaurant")
        let destination = try place(
            destinationId, campus: caller.campus, kind: "building", what: "destination building")
        if let runId {
            guard let run = try run(id: runId), run.restaurant.id == restaurantId, run.delivererId != caller.userId,
                try connection.query("SELECT 1 FROM runs WHERE id = \(runId) AND campus = \(caller.campus)").count == 1
            else { throw MatchingError.notFound("run at that restaurant") }
            guard run.status.isOpen else { throw MatchingError.conflict("That run is \(run.status.rawValue).") }
        }
        // NB: the orderer's lock serialises their orders, so that two at once cannot both pass the cap.
        try connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(caller.userId)::text, 0))")
        let openOrders: Int = try connection.query(
            """
            SELECT count(*) AS open FROM orders
            WHERE orderer_id = \(caller.userId) AND status IN ('waiting', 'offered', 'matched')
            """
        ).first!.decode("open")
        guard openOrders < DeliveryRules.maxOpenOrders else {
            throw MatchingError.conflict(
                "You already have \(openOrders) open orders; cancel one or wait until one is done.")
        }
        let expiresAt = Date().addingTimeInterval(settings.orderLifetime)
        try connection.query(
            """
            INSERT INTO orders (id, orderer_id, orderer_name, campus, restaurant_id, destination_id, items, requested_run_id,
                status, expires_at)
            VALUES (\(id), \(caller.userId), \(caller.name), \(caller.campus), \(restaurantId), \(destinationId), \(items),
                \(runId), 'waiting', \(expiresAt))
            """)
        try addTimer(.order, id, due: expiresAt)
        try Outbox.append(
            OrderPlaced(
                orderId: id, campus: caller.campus, ordererId: caller.userId, restaurant: restaurant,
                destination: destination, items: items, expiresAt: expiresAt, version: 1), on: connection)
        try dispatch(orderId: id)
        return try order(id: id)!
    }

    func orderOwner(id: UUID) throws -> UUID? {
        try connection.query("SELECT orderer_id FROM orders WHERE id = \(id)").first?.decode("orderer_id")
    }

    func order(id: UUID) throws -> Order? {
        try connection.query(
            """
            SELECT o.id, o.items, o.status, o.requested_run_id, o.expires_at, o.created_at,
                (SELECT m.id FROM matches m WHERE m.order_id = o.id AND m.status <> 'cancelled' ORDER BY m.created_at DESC LIMIT 1) AS match_id,
                p.id AS r_id, p.name AS r_name, p.latitude AS r_latitude, p.longitude AS r_longitude,
                d.id AS d_id, d.name AS d_name, d.latitude AS d_latitude, d.longitude AS d_longitude
            FROM orders o JOIN places p ON p.id = o.restaurant_id JOIN places d ON d.id = o.destination_id
            WHERE o.id = \(id)
            """
        ).first.map { row in
            Order(
                id: try row.decode("id"), restaurant: try PlaceSummary(row: row, prefix: "r_"),
                destination: try PlaceSummary(row: row, prefix: "d_"), items: try row.decode("items"),
                status: try OrderStatus(text: try row.decode("status")),
                requestedRunId: try row.decode("requested_run_id"),
                matchId: try row.decode("match_id"), expiresAt: try row.decode("expires_at"),
                createdAt: try row.decode("created_at"))
        }
    }

    struct OrderState {
        var id: UUID
        var ordererId: UUID
        var ordererName: String
        var status: OrderStatus
        var restaurantId: UUID
        var destinationId: UUID
        var requestedRunId: UUID?
        var campus: String
        var items: String
    }

    func lockOrder(id: UUID) throws -> OrderState? {
        try connection.query(
            """
            SELECT id, orderer_id, orderer_name, status, restaurant_id, destination_id, requested_run_id, campus, items
            FROM orders WHERE id = \(id) FOR UPDATE
            """
        ).first.map { row in
            OrderState(
                id: try row.decode("id"), ordererId: try row.decode("orderer_id"),
                ordererName: try row.decode("orderer_name"),
                status: try OrderStatus(text: try row.decode("status")), restaurantId: try row.decode("restaurant_id"),
                destinationId: try row.decode("destination_id"), requestedRunId: try row.decode("requested_run_id"),
                campus: try row.decode("campus"), items: try row.decode("items"))
        }
    }

    func setOrderStatus(_ id: UUID, _ status: OrderStatus) throws {
        try connection.query("UPDATE orders SET status = \(status.rawValue), version = version + 1 WHERE id = \(id)")
    }

    /// Offers a waiting order to the best run, or leaves it waiting when there is none.
    func dispatch(orderId: UUID) throws {
        guard let order = try lockOrder(id: orderId), order.status == .waiting else { return }
        let candidates = try connection.query(
            """
            SELECT r.id,
                r.capacity - r.held - (SELECT count(*) FROM offers o WHERE o.run_id = r.id AND o.status = 'pending') AS free,
                distance_meters(rd.latitude, rd.longitude, od.latitude, od.longitude) AS detour,
                EXISTS (SELECT 1 FROM offers o WHERE o.run_id = r.id AND o.order_id = \(orderId)) AS offered
            FROM runs r JOIN places rd ON rd.id = r.destination_id, places od
            WHERE od.id = \(order.destinationId) AND r.status = 'open' AND r.closes_at > now()
              AND r.restaurant_id = \(order.restaurantId) AND r.campus = \(order.campus) AND r.deliverer_id <> \(order.ordererId)
              AND (\(order.requestedRunId)::uuid IS NULL OR r.id = \(order.requestedRunId))
            """
        ).map { row in
            Dispatch.Candidate(
                runId: try row.decode("id", as: UUID.self).uuidString, detourMeters: try row.decode("detour"),
                freeSeats: try row.decode("free"), wasOfferedBefore: try row.decode("offered"))
        }
        let radius = order.requestedRunId == nil ? settings.matchRadiusMeters : .infinity
        guard let chosen = Dispatch.choose(candidates, radius: radius), let runId = UUID(uuidString: chosen.runId),
            let run = try run(id: runId, lock: true), try freeSeats(runId: runId) > 0
        else { return }
        let offerId = UUID()
        let expiresAt = Date().addingTimeInterval(settings.offerWindow)
        try connection.query(
            """
            INSERT INTO offers (id, order_id, run_id, deliverer_id, status, expires_at)
            VALUES (\(offerId), \(orderId), \(runId), \(run.delivererId), 'pending', \(expiresAt))
            """)
        try addTimer(.offer, offerId, due: expiresAt)
        try setOrderStatus(orderId, try order.status.after(.offer))
        try Outbox.append(
            OfferMade(
                offerId: offerId, orderId: orderId, runId: runId, delivererId: run.delivererId,
                ordererName: order.ordererName, restaurant: run.restaurant.reference,
                destination: PlaceReference(placeId: order.destinationId, name: try placeName(order.destinationId)),
                items: order.items, expiresAt: expiresAt, version: 1), on: connection)
    }

    func placeName(_ id: UUID) throws -> String {
        try connection.query("SELECT name FROM places WHERE id = \(id)").first?.decode("name") ?? ""
    }

    /// Withdraws the offer of an order that is going away (`reason`), telling its deliverer; its seat goes to the
    /// orders waiting at the restaurant.
    func withdrawPendingOffer(orderId: UUID, reason: String) throws {
        let freed = try connection.query(
            """
            UPDATE offers SET status = 'withdrawn', version = version + 1 WHERE order_id = \(orderId) AND status = 'pending'
            RETURNING id, order_id, run_id, deliverer_id, version
            """)
        for row in freed {
            try Outbox.append(OfferWithdrawn(offer: try OfferEnded(withdrawn: row), reason: reason), on: connection)
            try fillSeats(of: try row.decode("run_id"))
        }
    }

    // MARK: Offers

    struct OfferState {
        var id: UUID
        var orderId: UUID
        var runId: UUID
        var delivererId: UUID
        var status: OfferStatus
        var isExpired: Bool
        var version: Int64

        var ended: OfferEnded {
            OfferEnded(offerId: id, orderId: orderId, delivererId: delivererId, version: version + 1)
        }
    }

    func lockOffer(id: UUID) throws -> OfferState? {
        try connection.query(
            """
            SELECT id, order_id, run_id, deliverer_id, status, expires_at <= now() AS expired, version
            FROM offers WHERE id = \(id) FOR UPDATE
            """
        ).first.map { row in
            OfferState(
                id: try row.decode("id"), orderId: try row.decode("order_id"), runId: try row.decode("run_id"),
                delivererId: try row.decode("deliverer_id"), status: try OfferStatus(text: try row.decode("status")),
                isExpired: try row.decode("expired"), version: try row.decode("version"))
        }
    }

    /// The offer's deliverer takes the order: at most one accepted deliverer per order, never over capacity.
    func accept(offerId: UUID, caller: Identity) throws -> Match {
        guard let offer = try lockOffer(id: offerId), offer.delivererId == caller.userId else {
            throw MatchingError.notFound("offer")
        }
        // NB: offer, then order, then run; a path that locks them in another order can deadlock with this one,
        // and the transaction helper runs the loser again.
        guard let order = try lockOrder(id: offer.orderId), let run = try run(id: offer.runId, lock: true) else {
            throw MatchingError.notFound("offer")
        }
        let accepted = try offer.status.after(.accept)
        guard !offer.isExpired else { throw MatchingError.conflict("The offer has expired.") }
        guard run.status.isOpen else { throw MatchingError.conflict("The run is \(run.status.rawValue).") }
        guard run.held < run.capacity else { throw MatchingError.conflict("The run is full.") }
        let orderStatus = try order.status.after(.accept)
        try connection.query(
            "UPDATE offers SET status = \(accepted.rawValue), version = version + 1 WHERE id = \(offerId)")
        try connection.query("UPDATE runs SET held = held + 1, version = version + 1 WHERE id = \(run.id)")
        try setOrderStatus(order.id, orderStatus)
        let matchId = UUID()
        try connection.query(
            """
            INSERT INTO matches (id, order_id, run_id, campus, orderer_id, deliverer_id, status)
            VALUES (\(matchId), \(order.id), \(run.id), \(order.campus), \(order.ordererId), \(run.delivererId), 'active')
            """)
        let match = try self.match(id: matchId)!
        try Outbox.append(MatchAccepted(match: match.parties(campus: order.campus), version: 1), on: connection)
        try match.flowMatch(campus: order.campus).announceOpened(on: connection)
        return match
    }

    func decline(offerId: UUID, caller: Identity) throws -> Offer {
        guard let offer = try lockOffer(id: offerId), offer.delivererId == caller.userId,
            let order = try lockOrder(id: offer.orderId)
        else { throw MatchingError.notFound("offer") }
        let declined = try offer.status.after(.decline)
        try endOffer(offer, as: declined, order: order)
        try Outbox.append(OfferDeclined(offer: offer.ended), on: connection)
        try dispatch(orderId: order.id)
        try fillSeats(of: offer.runId)
        return Offer(id: offer.id, orderId: offer.orderId, runId: offer.runId, status: declined, expiresAt: Date())
    }

    private func endOffer(_ offer: OfferState, as status: OfferStatus, order: OrderState) throws {
        try connection.query(
            "UPDATE offers SET status = \(status.rawValue), version = version + 1 WHERE id = \(offer.id)")
        if order.status == .offered {
            try setOrderStatus(order.id, try order.status.after(.offerEnded))
        }
    }

    // MARK: Matches

    func match(id: UUID, lock: Bool = false) throws -> Match? {
        try connection.query(
            """
            SELECT m.id, m.order_id, m.run_id, m.status, m.orderer_id, m.deliverer_id, m.orderer_completed,
                m.deliverer_completed, m.deliverer_position_at, m.deliverer_lat, m.deliverer_lon, o.items,
                coalesce(ou.name, o.orderer_name) AS orderer_name,
                coalesce(du.name, r.deliverer_name) AS deliverer_name,
                p.id AS r_id, p.name AS r_name, p.latitude AS r_latitude, p.longitude AS r_longitude,
                d.id AS d_id, d.name AS d_name, d.latitude AS d_latitude, d.longitude AS d_longitude
            FROM matches m JOIN orders o ON o.id = m.order_id JOIN runs r ON r.id = m.run_id
            JOIN places p ON p.id = o.restaurant_id JOIN places d ON d.id = o.destination_id
            LEFT JOIN users ou ON ou.id = m.orderer_id LEFT JOIN users du ON du.id = m.deliverer_id
            WHERE m.id = \(id)
            \(unescaped: lock ? "FOR UPDATE OF m" : "")
            """
        ).first.map { row in
            Match(
                id: try row.decode("id"), orderId: try row.decode("order_id"), runId: try row.decode("run_id"),
                status: try MatchStatus(text: try row.decode("status")), ordererId: try row.decode("orderer_id"),
                ordererName: try row.decode("orderer_name"), delivererId: try row.decode("deliverer_id"),
                delivererName: try row.decode("deliverer_name"), restaurant: try PlaceSummary(row: row, prefix: "r_"),
                destination: try PlaceSummary(row: row, prefix: "d_"), items: try row.decode("items"),
                ordererCompleted: try row.decode("orderer_completed"),
                delivererCompleted: try row.decode("deliverer_completed"),
                delivererPosition: try (row.decode("deliverer_position_at") as Date?).map {
                    LivePosition(lat: try row.decode("deliverer_lat"), lon: try row.decode("deliverer_lon"), at: $0)
                })
        }
    }

    func activeMatch(orderId: UUID) throws -> Match? {
        guard
            let id: UUID = try connection.query(
                "SELECT id FROM matches WHERE order_id = \(orderId) AND status = 'active'"
            ).first?.decode("id")
        else { return nil }
        return try match(id: id, lock: true)
    }

    /// Ends a match on one side's word: the orderer's ends the order; the deliverer's sends it back to dispatch.
    func cancel(_ match: Match, by side: MatchSide) throws {
        let status = try match.status.after(.cancel)
        guard let order = try lockOrder(id: match.orderId) else { throw MatchingError.notFound("match") }
        _ = try run(id: match.runId, lock: true)
        let version: Int64 = try connection.query(
            """
            UPDATE matches SET status = \(status.rawValue), version = version + 1, deliverer_lat = NULL,
                deliverer_lon = NULL, deliverer_position_at = NULL
            WHERE id = \(match.id)
            RETURNING version
            """
        ).first!.decode("version")
        try connection.query("UPDATE runs SET held = held - 1, version = version + 1 WHERE id = \(match.runId)")
        let campus = order.campus
        try Outbox.append(
            MatchCancelled(match: match.parties(campus: campus), cancelledBy: side.rawValue, version: version),
            on: connection)
        try match.flowMatch(campus: campus).announceClosed(.cancelled, version: version, on: connection)
        switch side {
        case .orderer:
            try setOrderStatus(order.id, try order.status.after(.cancel))
        case .deliverer:
            try setOrderStatus(order.id, try order.status.after(.delivererCancelled))
            try dispatch(orderId: order.id)
        }
        try fillSeats(of: match.runId)
    }

    /// Marks one side's completion; when both have, the match and the order are complete.
    func complete(_ match: Match, by side: MatchSide) throws {
        guard match.status == .active else {
            if match.status == .completed { return }
            throw MatchingError.conflict("The match is \(match.status.rawValue).")
        }
        let column: SQL = side == .orderer ? "orderer_completed" : "deliverer_completed"
        let row = try connection.query(
            """
            UPDATE matches SET \(column) = true, version = version + 1 WHERE id = \(match.id)
            RETURNING orderer_completed AND deliverer_completed AS done, version
            """
        ).first!
        guard try row.decode("done", as: Bool.self) else { return }
        let status = try match.status.after(.complete)
        guard let order = try lockOrder(id: match.orderId) else { return }
        _ = try run(id: match.runId, lock: true)
        let version: Int64 = try connection.query(
            """
            UPDATE matches SET status = \(status.rawValue), version = version + 1, deliverer_lat = NULL,
                deliverer_lon = NULL, deliverer_position_at = NULL
            WHERE id = \(match.id)
            RETURNING version
            """
        ).first!.decode("version")
        try connection.query("UPDATE runs SET held = held - 1, version = version + 1 WHERE id = \(match.runId)")
        try setOrderStatus(order.id, try order.status.after(.complete))
        try Outbox.append(MatchCompleted(match: match.parties(campus: order.campus), version: version), on: connection)
        try match.flowMatch(campus: order.campus).announceClosed(.completed, version: version, on: connection)
        try fillSeats(of: match.runId)
    }

    // MARK: Live positions

    /// Keeps the deliverer's position on their active match and paces it to the orderer: the match, and the frame to
    /// send once committed (nil when the position waits for the match's position timer).
    func reportPosition(_ point: GeoPoint, matchId: UUID, caller: Identity) throws -> (Match, PendingFrame?) {
        guard let match = try match(id: matchId, lock: true), match.delivererId == caller.userId else {
            throw MatchingError.notFound("match")
        }
        guard match.status == .active else {
            throw MatchingError.conflict("The match is \(match.status.rawValue); its position is no longer shared.")
        }
        try connection.query(
            """
            UPDATE matches SET deliverer_lat = \(point.lat)::double precision,
                deliverer_lon = \(point.lon)::double precision, deliverer_position_at = now()
            WHERE id = \(matchId)
            """)
        let updated = try self.match(id: matchId)!
        let frame = updated.delivererPosition.map {
            PendingFrame(.init(matchId: matchId, position: $0), to: match.ordererId)
        }
        let isDue = try PositionPacing.record(table: "matches", id: matchId, flow: DeliveryFlow.name, on: connection)
        return (updated, isDue ? frame : nil)
    }

    /// The latest position of a match's deliverer, as a frame to its orderer, while the match is active.
    func latestPositionFrame(_ matchId: UUID) throws -> PendingFrame? {
        guard let match = try match(id: matchId), match.status == .active, let position = match.delivererPosition else {
            return nil
        }
        return PendingFrame(.init(matchId: matchId, position: position), to: match.ordererId)
    }

    // MARK: Timers

    /// `position` is `PositionPacing.timerKind`.
    enum TimerKind: String, CaseIterable { case offer, run, order, position }

    func addTimer(_ kind: TimerKind, _ target: UUID, due: Date) throws {
        try Timers.add(flow: DeliveryFlow.name, kind: kind.rawValue, target: target, due: due, on: connection)
    }

    /// Does what a timer is due for; a position timer answers the frame to send.
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
        guard let offer = try lockOffer(id: id), offer.status == .pending, let order = try lockOrder(id: offer.orderId)
        else { return }
        try endOffer(offer, as: try offer.status.after(.expire), order: order)
        try Outbox.append(OfferExpired(offer: offer.ended), on: connection)
        try dispatch(orderId: order.id)
        try fillSeats(of: offer.runId)
    }

    private func expireRun(_ id: UUID) throws {
        guard let run = try run(id: id, lock: true), run.status.isOpen else { return }
        try close(run, to: try run.status.after(.expire), reason: "expired")
    }

    private func expireOrder(_ id: UUID) throws {
        guard let order = try lockOrder(id: id), order.status == .waiting || order.status == .offered else { return }
        try withdrawPendingOffer(orderId: id, reason: "orderExpired")
        let version: Int64 = try connection.query(
            "UPDATE orders SET status = \(try order.status.after(.expire).rawValue), version = version + 1 WHERE id = \(id) RETURNING version"
        ).first!.decode("version")
        try Outbox.append(OrderExpired(orderId: id, ordererId: order.ordererId, version: version), on: connection)
    }
}

extension OfferEnded {
    /// From the `RETURNING id, order_id, deliverer_id, version` of an offer just withdrawn.
    init(withdrawn row: PostgresRow) throws {
        self.init(
            offerId: try row.decode("id"), orderId: try row.decode("order_id"),
            delivererId: try row.decode("deliverer_id"),
            version: try row.decode("version"))
    }
}

extension PlaceSummary {
    init(row: PostgresRow, prefix: String) throws {
        id = try row.decode("\(prefix)id")
        name = try row.decode("\(prefix)name")
        latitude = try row.decode("\(prefix)latitude")
        longitude = try row.decode("\(prefix)longitude")
    }

    var reference: PlaceReference { PlaceReference(placeId: id, name: name) }
}

extension Match {
    func isMember(_ userId: UUID) -> Bool { side(of: userId) != nil }

    func side(of userId: UUID) -> MatchSide? {
        userId == ordererId ? .orderer : userId == delivererId ? .deliverer : nil
    }

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

    func parties(campus: String) -> MatchParties {
        MatchParties(
            matchId: id, orderId: orderId, runId: runId, campus: campus, ordererId: ordererId, ordererName: ordererName,
            delivererId: delivererId, delivererName: delivererName, restaurant: restaurant.reference,
            destination: destination.reference)
    }
}

extension RawRepresentable where RawValue == String {
    init(text: String) throws {
        guard let value = Self(rawValue: text) else { throw PostgresError.decoding("unknown state \(text)") }
        self = value
    }
}
