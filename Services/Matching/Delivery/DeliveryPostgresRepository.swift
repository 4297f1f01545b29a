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

    func run(id: UUID) throws -> Run? {
        try connection.read(Self.run(id: id))
    }

    /// The run, or nil when there is none (or no id).
    static func run(id: UUID?) -> PostgresRead<Run?> {
        runs(where: "r.id = \(id)", from: nil).map(\.first)
    }

    func lockRun(id: UUID) throws -> Run? {
        try connection.read(Self.lockedRun(id: id))
    }

    static func lockedRun(id: UUID) -> PostgresRead<Run?> {
        runs(where: "r.id = \(id)", from: nil, lock: true).map(\.first)
    }

    /// The open runs at a restaurant that have not closed yet, nearest destination to `point` first when one is given;
    /// not those of a deliverer in a block with `viewerId`.
    func openRuns(
        restaurantId: UUID, campus: String, viewerId: UUID, from point: (latitude: Double, longitude: Double)?
    ) throws -> [Run] {
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

    func runs(where condition: SQL, from point: (latitude: Double, longitude: Double)?, lock: Bool = false)
        throws -> [Run]
    {
        try connection.read(Self.runs(where: condition, from: point, lock: lock))
    }

    static func runs(where condition: SQL, from point: (latitude: Double, longitude: Double)?, lock: Bool = false)
        -> PostgresRead<[Run]>
    {
        let distance: SQL =
            point.map { "distance_meters(\($0.latitude), \($0.longitude), d.latitude, d.longitude)" }
            ?? "NULL::double precision"
        return PostgresRead(
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
        ) { try $0.map(Run.init(row:)) }
    }

    /// The campus a run is on.
    static func campus(ofRun id: UUID?) -> PostgresRead<String?> {
        PostgresRead("SELECT campus FROM runs WHERE id = \(id)") { try $0.first?.decode("campus") }
    }

    /// Whether a block stands between the run's deliverer and `userId`; false when there is no such run.
    static func isBlocked(delivererOf runId: UUID?, with userId: UUID) -> PostgresRead<Bool> {
        PostgresRead(
            """
            SELECT 1 AS blocked FROM runs r
            WHERE r.id = \(runId) AND NOT \(ReadModels.unblocked("r.deliverer_id", "\(userId)::uuid"))
            """
        ) { !$0.isEmpty }
    }

    /// The restaurant and campus of a run, for the orders waiting there.
    static func restaurantAndCampus(ofRun id: UUID) -> PostgresRead<(restaurantId: UUID, campus: String)?> {
        PostgresRead("SELECT restaurant_id, campus FROM runs WHERE id = \(id)") { rows in
            guard let row = rows.first else { return nil }
            return (try row.decode("restaurant_id"), try row.decode("campus"))
        }
    }

    /// The seats of an open run neither held by a match nor offered; 0 for a run that is not open.
    func freeSeats(runId: UUID) throws -> Int {
        try connection.read(Self.freeSeats(runId: runId))
    }

    static func freeSeats(runId: UUID) -> PostgresRead<Int> {
        PostgresRead(
            """
            SELECT r.capacity - r.held - (SELECT count(*) FROM offers o WHERE o.run_id = r.id AND o.status = 'pending') AS free
            FROM runs r WHERE r.id = \(runId) AND r.status = 'open'
            """
        ) { try $0.first?.decode("free") ?? 0 }
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
    static func lockOrders(of ordererId: UUID) -> PostgresRead<Void> {
        PostgresRead("SELECT pg_advisory_xact_lock(hashtextextended(\(ordererId)::text, 0))") { _ in }
    }

    /// How many of a student's orders are waiting, offered or matched.
    static func countOpenOrders(ordererId: UUID) -> PostgresRead<Int> {
        PostgresRead(
            """
            SELECT count(*) AS open FROM orders
            WHERE orderer_id = \(ordererId) AND status IN ('waiting', 'offered', 'matched')
            """
        ) { try $0.first!.decode("open") }
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
        try connection.read(Self.orderOwner(id: id))
    }

    static func orderOwner(id: UUID?) -> PostgresRead<UUID?> {
        PostgresRead("SELECT orderer_id FROM orders WHERE id = \(id)") { try $0.first?.decode("orderer_id") }
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
        try connection.read(Self.lockedOrder(id: id))
    }

    static func lockedOrder(id: UUID) -> PostgresRead<OrderState?> {
        PostgresRead(
            """
            SELECT o.id, o.orderer_id, o.orderer_name, o.status, array_to_string(o.restaurant_ids, ',') AS restaurant_ids,
                o.requested_run_id, o.campus, o.items, o.expires_at <= now() AS expired, \(Self.orderDestination)
            FROM orders o WHERE o.id = \(id) FOR UPDATE
            """
        ) { try $0.first.map(OrderState.init(row:)) }
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

    /// The open runs that could take an order: at any of its restaurants, on its campus, not its orderer's, the one it asks for
    /// when it asks for one, with their free seats and the distance between the two destinations. Read from the
    /// order's row, so that it can go in the round trip that locks the order.
    static func dispatchCandidates(orderId: UUID) -> PostgresRead<[Dispatch.Candidate]> {
        PostgresRead(
            """
            SELECT r.id,
                r.capacity - r.held - (SELECT count(*) FROM offers o WHERE o.run_id = r.id AND o.status = 'pending') AS free,
                distance_meters(rd.latitude, rd.longitude, ord.destination_lat, ord.destination_lon) AS detour,
                EXISTS (SELECT 1 FROM offers o WHERE o.run_id = r.id AND o.order_id = ord.id) AS offered
            FROM orders ord
            JOIN runs r ON r.restaurant_id = ANY(ord.restaurant_ids) AND r.campus = ord.campus
            JOIN places rd ON rd.id = r.destination_id
            WHERE ord.id = \(orderId) AND r.status = 'open' AND r.closes_at > now()
              AND \(ReadModels.unblocked("r.deliverer_id", "ord.orderer_id"))
              AND r.deliverer_id <> ord.orderer_id
              AND (ord.requested_run_id IS NULL OR r.id = ord.requested_run_id)
            """
        ) { try $0.map(Dispatch.Candidate.init(row:)) }
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

    // MARK: Blocks

    /// The active matches between two students, either side, locked.
    func lockActiveMatches(between a: UUID, _ b: UUID) throws -> [Match] {
        try connection.query(
            """
            SELECT id FROM matches WHERE status = 'active'
              AND ((orderer_id = \(a) AND deliverer_id = \(b)) OR (orderer_id = \(b) AND deliverer_id = \(a)))
            ORDER BY created_at
            """
        ).compactMap { try lockMatch(id: try $0.decode("id")) }
    }

    /// The orders with a pending offer between two students, either side.
    func ordersOffered(between a: UUID, _ b: UUID) throws -> [UUID] {
        try connection.query(
            """
            SELECT o.id FROM offers f JOIN orders o ON o.id = f.order_id WHERE f.status = 'pending'
              AND ((o.orderer_id = \(a) AND f.deliverer_id = \(b)) OR (o.orderer_id = \(b) AND f.deliverer_id = \(a)))
            """
        ).map { try $0.decode("id") }
    }

    // MARK: Places

    /// The restaurants of a campus with open runs that have not closed yet, by name: how many, and their free seats.
    func restaurantsWithRuns(campus: String) throws -> [RestaurantWithRuns] {
        try connection.query(
            """
            SELECT p.id, p.name, p.latitude, p.longitude, count(*) AS runs, sum(r.capacity - r.held) AS seats
            FROM runs r JOIN places p ON p.id = r.restaurant_id
            WHERE r.campus = \(campus) AND r.status = 'open' AND r.closes_at > now()
            GROUP BY p.id, p.name, p.latitude, p.longitude ORDER BY p.name
            """
        ).map(RestaurantWithRuns.init(row:))
    }

    /// Whether `id` is a restaurant of the campus (retired or not): another campus's is as unknown as none.
    func isRestaurant(_ id: UUID, campus: String) throws -> Bool {
        try !connection.query(
            "SELECT 1 AS known FROM places WHERE id = \(id) AND campus = \(campus) AND kind = 'restaurant'"
        ).isEmpty
    }

    /// A live building of the campus, with its point.
    static func building(_ id: UUID, campus: String) -> PostgresRead<PlaceSummary?> {
        PostgresRead(
            """
            SELECT id, name, latitude, longitude FROM places
            WHERE id = \(id) AND campus = \(campus) AND kind = 'building' AND NOT is_retired
            """
        ) { try $0.first.map { try PlaceSummary(row: $0, prefix: "") } }
    }

    /// The name of the campus's building nearest `point` (within 500 m), for a destination given as a point.
    static func nearestBuildingName(to point: GeoPoint, campus: String) -> PostgresRead<String?> {
        PostgresRead(
            """
            SELECT name FROM places
            WHERE campus = \(campus) AND kind = 'building' AND NOT is_retired
              AND distance_meters(latitude, longitude, \(point.lat), \(point.lon)) <= 500
            ORDER BY distance_meters(latitude, longitude, \(point.lat), \(point.lon)) LIMIT 1
            """
        ) { try $0.first?.decode("name") }
    }
}
