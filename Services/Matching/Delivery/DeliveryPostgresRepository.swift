import Foundation
import MatchingCore
import Postgres
import ServiceKit

/// The delivery flow's rows in matching's database: its SQL and their decoding, here and in this type's extensions
/// alone. Made from one connection, so that its reads, locks and writes belong to the transaction the steps opened on
/// it; it decides nothing.
struct DeliveryPostgresRepository {
    let connection: PostgresConnection

    // MARK: Runs

    /// Inserts an open run; false when its deliverer has an open run already (or the id is taken).
    func insertRun(
        id: UUID, deliverer: Identity, restaurantId: UUID, destinationId: UUID, capacity: Int, closesAt: Date
    ) throws -> Bool {
        do {
            try connection.query(
                """
                INSERT INTO runs (id, deliverer_id, deliverer_name, campus, restaurant_id, destination_id, capacity, status, closes_at)
                VALUES (\(id), \(deliverer.userId), \(deliverer.name), \(deliverer.campus), \(restaurantId), \(destinationId),
                    \(capacity), 'open', \(closesAt))
                """)
            return true
        } catch let error as PostgresError where error.isUniqueViolation {
            return false
        }
    }

    /// The run, or nil when there is none (or no id).
    func run(id: UUID?) throws -> Run? {
        guard let id else { return nil }
        return try runs(where: "r.id = \(id)", from: nil).first
    }

    func lockRun(id: UUID) throws -> Run? {
        try runs(where: "r.id = \(id)", from: nil, lock: true).first
    }

    /// The open runs at a restaurant that have not closed yet, nearest destination to `point` first when one is given;
    /// not those of a deliverer in a block with `viewerId`.
    func openRuns(restaurantId: UUID, campus: String, viewerId: UUID, from point: GeoPoint?) throws -> [Run] {
        try runs(
            where: """
                r.restaurant_id = \(restaurantId) AND r.campus = \(campus) AND r.status = 'open' AND r.closes_at > now()
                  AND \(ReadModels.unblocked("r.deliverer_id", "\(viewerId)::uuid"))
                """,
            from: point)
    }

    /// A deliverer's open runs on a campus, whether or not their window passed.
    func openRuns(delivererId: UUID, campus: String) throws -> [Run] {
        try runs(where: "r.deliverer_id = \(delivererId) AND r.campus = \(campus) AND r.status = 'open'", from: nil)
    }

    func runs(where condition: SQL, from point: GeoPoint?, lock: Bool = false) throws -> [Run] {
        let distance: SQL =
            point.map { "ST_Distance(\(GeoPoint.geography(lat: "d.latitude", lon: "d.longitude")), \($0.geography))" }
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
        ).map(Run.init(row:))
    }

    /// The campus a run is on.
    func campus(ofRun id: UUID) throws -> String? {
        try connection.query("SELECT campus FROM runs WHERE id = \(id)").first?.decode("campus")
    }

    /// Whether a block stands between the run's deliverer and `userId`; false when there is no such run.
    func isBlocked(delivererOf runId: UUID, with userId: UUID) throws -> Bool {
        try !connection.query(
            """
            SELECT 1 AS blocked FROM runs r
            WHERE r.id = \(runId) AND NOT \(ReadModels.unblocked("r.deliverer_id", "\(userId)::uuid"))
            """
        ).isEmpty
    }

    /// The restaurant and campus of a run, for the orders waiting there.
    func restaurantAndCampus(ofRun id: UUID) throws -> (restaurantId: UUID, campus: String)? {
        guard let row = try connection.query("SELECT restaurant_id, campus FROM runs WHERE id = \(id)").first else {
            return nil
        }
        return (try row.decode("restaurant_id"), try row.decode("campus"))
    }

    /// The seats of an open run neither held by a match nor offered; 0 for a run that is not open.
    func freeSeats(runId: UUID) throws -> Int {
        try connection.query(
            """
            SELECT r.capacity - r.held - (SELECT count(*) FROM offers o WHERE o.run_id = r.id AND o.status = 'pending') AS free
            FROM runs r WHERE r.id = \(runId) AND r.status = 'open'
            """
        ).first?.decode("free") ?? 0
    }

    /// Returns the run's new version.
    func setRunStatus(_ id: UUID, _ status: RunStatus) throws -> Int64 {
        try connection.query(
            "UPDATE runs SET status = \(status.rawValue), version = version + 1 WHERE id = \(id) RETURNING version"
        ).first!.decode("version")
    }

    /// One more seat of the run taken by a match.
    func holdSeat(runId: UUID) throws {
        try connection.query("UPDATE runs SET held = held + 1, version = version + 1 WHERE id = \(runId)")
    }

    /// A seat of the run free again: its match ended.
    func releaseSeat(runId: UUID) throws {
        try connection.query("UPDATE runs SET held = held - 1, version = version + 1 WHERE id = \(runId)")
    }

    // MARK: Orders

    /// Takes the orderer's lock until the transaction ends, which serialises their orders.
    func lockOrders(of ordererId: UUID) throws {
        try connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(ordererId)::text, 0))")
    }

    /// How many of a student's orders are waiting, offered or matched.
    func countOpenOrders(ordererId: UUID) throws -> Int {
        try connection.query(
            """
            SELECT count(*) AS open FROM orders
            WHERE orderer_id = \(ordererId) AND status IN ('waiting', 'offered', 'matched')
            """
        ).first!.decode("open")
    }

    /// Inserts a waiting order for any of `restaurantIds` (the first is `restaurant_id`) to `destination`.
    func insertOrder(
        id: UUID, orderer: Identity, restaurantIds: [UUID], destination: PlaceSummary, items: String, runId: UUID?,
        expiresAt: Date
    ) throws {
        try connection.enqueue(
            """
            INSERT INTO orders (id, orderer_id, orderer_name, campus, restaurant_id, restaurant_ids, destination_id,
                destination_name, destination_lat, destination_lon, items, requested_run_id, status, expires_at)
            VALUES (\(id), \(orderer.userId), \(orderer.name), \(orderer.campus), \(restaurantIds[0]),
                \(restaurantIds.map(\.uuidString))::uuid[], \(destination.id), \(destination.name), \(destination.latitude),
                \(destination.longitude), \(items), \(runId), 'waiting', \(expiresAt))
            """)
    }

    func orderOwner(id: UUID) throws -> UUID? {
        try connection.query("SELECT orderer_id FROM orders WHERE id = \(id)").first?.decode("orderer_id")
    }

    /// The order as the API shows it, with its latest match that was not cancelled.
    func order(id: UUID) throws -> Order? {
        try connection.query(
            """
            SELECT o.id, o.items, o.status, o.requested_run_id, o.expires_at, o.created_at,
                (SELECT m.id FROM matches m WHERE m.order_id = o.id AND m.status <> 'cancelled' ORDER BY m.created_at DESC LIMIT 1) AS match_id,
                \(Self.orderRestaurants) AS restaurants, \(Self.orderDestination)
            FROM orders o WHERE o.id = \(id)
            """
        ).first.map(Order.init(row:))
    }

    /// An order's restaurants as it named them, a JSON array of `PlaceSummary` (of `orders o`).
    static let orderRestaurants: SQL = """
        (SELECT json_agg(json_build_object('id', p.id, 'name', p.name, 'latitude', p.latitude, 'longitude', p.longitude)
            ORDER BY named.n)
         FROM unnest(o.restaurant_ids) WITH ORDINALITY AS named (id, n) JOIN places p ON p.id = named.id)::text
        """

    /// An order's destination as the columns `d_id`, `d_name`, `d_latitude` and `d_longitude` (of `orders o`).
    static let orderDestination: SQL = """
        o.destination_id AS d_id, o.destination_name AS d_name, o.destination_lat AS d_latitude,
        o.destination_lon AS d_longitude
        """

    func lockOrder(id: UUID) throws -> OrderState? {
        try connection.query(
            """
            SELECT o.id, o.orderer_id, o.orderer_name, o.status, array_to_string(o.restaurant_ids, ',') AS restaurant_ids,
                o.requested_run_id, o.campus, o.items, o.expires_at <= now() AS expired, \(Self.orderDestination)
            FROM orders o WHERE o.id = \(id) FOR UPDATE
            """
        ).first.map(OrderState.init(row:))
    }

    /// Up to 20 waiting orders that accept a restaurant, oldest first, locked; those another transaction holds are
    /// skipped.
    func lockWaitingOrders(restaurantId: UUID, campus: String) throws -> [UUID] {
        try connection.query(
            """
            SELECT id FROM orders
            WHERE restaurant_ids @> ARRAY[\(restaurantId)]::uuid[]
              AND campus = \(campus) AND status = 'waiting'
            ORDER BY created_at LIMIT 20 FOR UPDATE SKIP LOCKED
            """
        ).map { try $0.decode("id") }
    }

    /// Returns the order's new version (nil when there is no such order).
    @discardableResult
    func setOrderStatus(_ id: UUID, _ status: OrderStatus) throws -> Int64? {
        try connection.query("\(Self.statusUpdate(id, status)) RETURNING version").first?.decode("version")
    }

    /// `setOrderStatus` for a caller that needs no version back: it goes with the transaction's next statement.
    func queueOrderStatus(_ id: UUID, _ status: OrderStatus) throws {
        try connection.enqueue(Self.statusUpdate(id, status))
    }

    private static func statusUpdate(_ id: UUID, _ status: OrderStatus) -> SQL {
        "UPDATE orders SET status = \(status.rawValue), version = version + 1 WHERE id = \(id)"
    }

    /// The open runs that could take an order: at any of its restaurants, on its campus, not its orderer's, the one
    /// it asks for when it asks for one, with their free seats and the distance between the two destinations.
    func dispatchCandidates(orderId: UUID) throws -> [Dispatch.Candidate] {
        try connection.query(
            """
            SELECT r.id,
                r.capacity - r.held - (SELECT count(*) FROM offers o WHERE o.run_id = r.id AND o.status = 'pending') AS free,
                ST_Distance(\(GeoPoint.geography(lat: "rd.latitude", lon: "rd.longitude")),
                    \(GeoPoint.geography(lat: "ord.destination_lat", lon: "ord.destination_lon"))) AS detour,
                EXISTS (SELECT 1 FROM offers o WHERE o.run_id = r.id AND o.order_id = ord.id) AS offered
            FROM orders ord
            JOIN runs r ON r.restaurant_id = ANY(ord.restaurant_ids) AND r.campus = ord.campus
            JOIN places rd ON rd.id = r.destination_id
            WHERE ord.id = \(orderId) AND r.status = 'open' AND r.closes_at > now()
              AND \(ReadModels.unblocked("r.deliverer_id", "ord.orderer_id"))
              AND r.deliverer_id <> ord.orderer_id
              AND (ord.requested_run_id IS NULL OR r.id = ord.requested_run_id)
            """
        ).map(Dispatch.Candidate.init(row:))
    }

    /// Open orders of a student on a campus (waiting, offered or matched), oldest first.
    func openOrderIds(ordererId: UUID, campus: String) throws -> [UUID] {
        try connection.query(
            """
            SELECT id FROM orders
            WHERE orderer_id = \(ordererId) AND campus = \(campus)
                AND status IN ('waiting', 'offered', 'matched')
            ORDER BY created_at
            """
        ).map { try $0.decode("id") }
    }

    // MARK: Offers

    /// Inserts a pending offer.
    func insertOffer(id: UUID, orderId: UUID, runId: UUID, delivererId: UUID, expiresAt: Date) throws {
        try connection.enqueue(
            """
            INSERT INTO offers (id, order_id, run_id, deliverer_id, status, expires_at)
            VALUES (\(id), \(orderId), \(runId), \(delivererId), 'pending', \(expiresAt))
            """)
    }

    func lockOffer(id: UUID) throws -> OfferState? {
        try connection.query(
            """
            SELECT id, order_id, run_id, deliverer_id, status, expires_at <= now() AS expired, version
            FROM offers WHERE id = \(id) FOR UPDATE
            """
        ).first.map(OfferState.init(row:))
    }

    /// Locks the pending offer of an order, if any.
    func lockPendingOffers(orderId: UUID) throws {
        try connection.query("SELECT id FROM offers WHERE order_id = \(orderId) AND status = 'pending' FOR UPDATE")
    }

    func setOfferStatus(_ id: UUID, _ status: OfferStatus) throws {
        try connection.query(
            "UPDATE offers SET status = \(status.rawValue), version = version + 1 WHERE id = \(id)")
    }

    /// Withdraws the pending offers on a run: what each was.
    func withdrawPendingOffers(runId: UUID) throws -> [OfferEnded] {
        try connection.query(
            """
            UPDATE offers SET status = 'withdrawn', version = version + 1 WHERE run_id = \(runId) AND status = 'pending'
            RETURNING id, order_id, deliverer_id, version
            """
        ).map(OfferEnded.init(withdrawn:))
    }

    /// Withdraws the pending offer of an order: what it was, and its run.
    func withdrawPendingOffers(orderId: UUID) throws -> [(offer: OfferEnded, runId: UUID)] {
        try connection.query(
            """
            UPDATE offers SET status = 'withdrawn', version = version + 1 WHERE order_id = \(orderId) AND status = 'pending'
            RETURNING id, order_id, run_id, deliverer_id, version
            """
        ).map { (try OfferEnded(withdrawn: $0), try $0.decode("run_id")) }
    }
}
