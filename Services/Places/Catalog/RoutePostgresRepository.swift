import Foundation
import Postgres

/// The street networks and routing over them with pgRouting: the SQL of routes.
package struct RoutePostgresRepository: Sendable {
    let database: PostgresPool

    package init(database: PostgresPool) {
        self.database = database
    }

    /// The edges pgRouting reads for a mode, as the text of a query with one `%L` for the campus. Walking goes both
    /// ways at the length's cost; driving costs seconds, and -1 (no edge) against a one-way street.
    private static func edgesQuery(_ mode: RouteMode) -> String {
        switch mode {
        case .walk:
            "SELECT id, source, target, meters AS cost, meters AS reverse_cost FROM route_edges"
                + " WHERE campus = %L AND is_walkable"
        case .drive:
            "SELECT id, source, target, drive_seconds AS cost, drive_reverse_seconds AS reverse_cost FROM route_edges"
                + " WHERE campus = %L AND is_drivable"
        }
    }

    private static func networkColumn(_ mode: RouteMode) -> String {
        switch mode {
        case .walk: "is_on_walk_network"
        case .drive: "is_on_drive_network"
        }
    }

    // MARK: Routing

    /// The shortest walk, or the fastest drive, from `from` to `to` on `campus`. Each end joins its mode's network at
    /// the nearest junction, in a straight line; the route's meters and seconds count those stretches at walking pace.
    package func route(from: Coordinate, to: Coordinate, mode: RouteMode, campus: String) async throws -> Route {
        // NB: pgRouting reads the edges with a query of its own; one snapshot for the whole transaction keeps it on
        // the network the junctions were found in, even while an import replaces it.
        try await database.transaction(isolation: .repeatableRead) { connection in
            let start = try Self.nearestJunction(to: from, mode: mode, campus: campus, on: connection)
            let end = try Self.nearestJunction(to: to, mode: mode, campus: campus, on: connection)
            for (junction, field) in [(start, "from"), (end, "to")] {
                guard let junction else { throw PlaceError.noRoute(field: nil, "Your campus has no street network.") }
                guard junction.meters <= RouteQuery.maxSnapMeters else {
                    throw PlaceError.noRoute(
                        field: field,
                        "\(field) is \(Int(junction.meters)) m from the nearest street one can \(mode.rawValue) on; "
                            + "the most is \(Int(RouteQuery.maxSnapMeters)) m.")
                }
            }
            let (first, last) = (start!, end!)
            let row = try connection.query(
                """
                WITH steps AS (
                    SELECT seq, node, edge FROM pgr_dijkstra(
                        format(\(Self.edgesQuery(mode))::text, \(campus)::text), \(first.id)::bigint, \(last.id)::bigint, true)
                    WHERE edge <> -1
                ), legs AS (
                    SELECT s.seq, e.meters,
                        CASE WHEN s.node = e.source THEN e.drive_seconds ELSE e.drive_reverse_seconds END AS drive_seconds,
                        CASE WHEN s.node = e.source THEN e.geom ELSE ST_Reverse(e.geom) END AS geom
                    FROM steps s JOIN route_edges e ON e.campus = \(campus) AND e.id = s.edge
                )
                SELECT count(*)::int AS edges, coalesce(sum(meters), 0) AS meters,
                    coalesce(sum(drive_seconds), 0) AS drive_seconds,
                    ST_AsGeoJSON(ST_MakeLine(
                        ARRAY[ST_SetSRID(ST_MakePoint(\(from.longitude), \(from.latitude)), 4326)]
                        || coalesce(array_agg(geom ORDER BY seq), '{}')
                        || ARRAY[ST_SetSRID(ST_MakePoint(\(to.longitude), \(to.latitude)), 4326)]), 7) AS path
                FROM legs
                """
            ).first!
            let edges: Int = try row.decode("edges")
            guard edges > 0 || first.id == last.id else {
                throw PlaceError.noRoute(field: nil, "No street joins these points on foot or by car as asked.")
            }
            let legMeters = first.meters + last.meters
            let meters = legMeters + (try row.decode("meters", as: Double.self))
            let seconds =
                switch mode {
                case .walk: meters / RouteMode.walkingSpeed
                case .drive: try row.decode("drive_seconds", as: Double.self) + legMeters / RouteMode.walkingSpeed
                }
            let path = try JSONDecoder().decode(
                Route.LineString.self, from: Data(try row.decode("path", as: String.self).utf8))
            return Route(
                mode: mode, meters: (meters * 10).rounded() / 10, seconds: (seconds * 10).rounded() / 10, path: path)
        }
    }

    /// The nearest junction of the campus's main network of `mode`, and how far it is.
    private static func nearestJunction(
        to point: Coordinate, mode: RouteMode, campus: String, on connection: PostgresConnection
    ) throws -> (id: Int64, meters: Double)? {
        try connection.query(
            """
            WITH here AS (SELECT ST_SetSRID(ST_MakePoint(\(point.longitude), \(point.latitude)), 4326)::geography AS point)
            SELECT v.id, ST_Distance(v.location, here.point) AS meters
            FROM route_vertices v, here
            WHERE v.campus = \(campus) AND v.\(unescaped: networkColumn(mode))
            ORDER BY v.location <-> here.point
            LIMIT 1
            """
        ).first.map { (try $0.decode("id"), try $0.decode("meters")) }
    }

    // MARK: Import

    /// How big a campus's network is.
    package struct NetworkSummary: Sendable, Equatable, CustomStringConvertible {
        package var edges: Int
        package var junctions: Int
        package var walkJunctions: Int
        package var driveJunctions: Int

        package var description: String {
            "\(edges) edges between \(junctions) junctions; routes join the \(walkJunctions) junctions of the main "
                + "walking network and the \(driveJunctions) of the main driving network"
        }
    }

    /// Replaces the network of `campus` with `network` in one transaction, and marks the junctions of each mode's
    /// main network: the largest connected one on foot, the largest strongly connected one by car.
    package func replaceNetwork(_ network: StreetNetwork, campus: String) async throws -> NetworkSummary {
        let encoder = JSONEncoder()
        let vertices = String(decoding: try encoder.encode(network.vertices), as: UTF8.self)
        let edges = String(decoding: try encoder.encode(network.edges), as: UTF8.self)
        return try await database.transaction { connection in
            try connection.query("DELETE FROM route_edges WHERE campus = \(campus)")
            try connection.query("DELETE FROM route_vertices WHERE campus = \(campus)")
            try connection.query(
                """
                INSERT INTO route_vertices (campus, id, location)
                SELECT \(campus), v.id, ST_SetSRID(ST_MakePoint(v.lon, v.lat), 4326)::geography
                FROM json_to_recordset(\(vertices)::json) AS v(id bigint, lon double precision, lat double precision)
                """)
            try connection.query(
                """
                INSERT INTO route_edges (campus, id, source, target, source_key, name, is_walkable, is_drivable, meters,
                    drive_seconds, drive_reverse_seconds, geom)
                SELECT \(campus), e.id, e.source, e.target, e."sourceKey", e.name, e."isWalkable",
                    e."drivesForward" OR e."drivesBackward", m.meters,
                    CASE WHEN e."drivesForward" THEN m.meters / (e."kilometersPerHour" / 3.6) ELSE -1 END,
                    CASE WHEN e."drivesBackward" THEN m.meters / (e."kilometersPerHour" / 3.6) ELSE -1 END,
                    g.geom
                FROM json_to_recordset(\(edges)::json) AS e(id bigint, source bigint, target bigint, "sourceKey" text,
                        name text, "isWalkable" boolean, "drivesForward" boolean, "drivesBackward" boolean,
                        "kilometersPerHour" double precision, line json),
                    LATERAL (SELECT ST_SetSRID(ST_GeomFromGeoJSON(e.line::text), 4326) AS geom) AS g,
                    LATERAL (SELECT ST_Length(g.geom::geography) AS meters) AS m
                """)
            for (mode, components) in [(RouteMode.walk, "pgr_connectedComponents"), (.drive, "pgr_strongComponents")] {
                try connection.query(
                    """
                    WITH parts AS (
                        SELECT component, node FROM \(unescaped: components)(format(\(Self.edgesQuery(mode))::text, \(campus)::text))
                    ), main AS (
                        SELECT component FROM parts GROUP BY component ORDER BY count(*) DESC, component LIMIT 1
                    )
                    UPDATE route_vertices v SET \(unescaped: Self.networkColumn(mode)) = true
                    FROM parts JOIN main USING (component)
                    WHERE v.campus = \(campus) AND v.id = parts.node
                    """)
            }
            let row = try connection.query(
                """
                SELECT (SELECT count(*)::int FROM route_edges WHERE campus = \(campus)) AS edges,
                    count(*)::int AS junctions, count(*) FILTER (WHERE is_on_walk_network)::int AS walk,
                    count(*) FILTER (WHERE is_on_drive_network)::int AS drive
                FROM route_vertices WHERE campus = \(campus)
                """
            ).first!
            return NetworkSummary(
                edges: try row.decode("edges"), junctions: try row.decode("junctions"),
                walkJunctions: try row.decode("walk"),
                driveJunctions: try row.decode("drive"))
        }
    }
}
