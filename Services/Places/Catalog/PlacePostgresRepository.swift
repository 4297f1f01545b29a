import Contracts
import Foundation
import Messaging
import Postgres

/// Places' data in its own PostgreSQL database with PostGIS and pg_trgm: the only file with SQL.
package struct PlacePostgresRepository: Sendable {
    let database: PostgresPool
    /// How many names a typed prefix may begin before only the nearest that many of them are scored.
    var crowdedPrefix = 1_000

    package init(database: PostgresPool, crowdedPrefix: Int = 1_000) {
        self.database = database
        self.crowdedPrefix = crowdedPrefix
    }

    /// Places' own migrations, to run after the outbox's and the inbox's.
    package static let migrations = Bundle.module.url(forResource: "Migrations", withExtension: nil)!

    private static let placeColumns: SQL = """
        id, name, kind, subtype, cuisine, street, housenumber, postcode, city, opening_hours, campus,
        ST_Y(location::geometry) AS latitude, ST_X(location::geometry) AS longitude
        """

    // MARK: Search

    /// Places whose name or address matches `text` as typed (prefixes, a typo, any accents or case), best match
    /// first with nearer places ahead among similar matches.
    package func search(text: String, near point: Coordinate, campus: String, kind: PlaceKind?, limit: Int) async throws
        -> [Place]
    {
        try await database.transaction { connection in
            // NB: the default 0.6 misses one-letter typos in short names ("porthnia" scores 0.58 against "porthania").
            try connection.execute(script: "SET LOCAL pg_trgm.word_similarity_threshold = 0.45")
            // The query is normalised first so that the planner sees constants it can match to the indexes.
            let query: String = try connection.query("SELECT lower(unaccent(\(text))) AS q").first!.decode("q")
            let prefix = PlaceQuery.likeEscaped(query) + "%"
            let kindFilter: SQL = "(\(kind?.rawValue)::text IS NULL OR p.kind = \(kind?.rawValue))"
            // NB: when the text begins thousands of names (a city's "rav" of every Ravintola), scoring every match
            // takes most of a second. Then the best matches are among those names anyway: only the nearest of them
            // and the names equal to the text are scored.
            let isCrowded: Bool = try connection.query(
                """
                SELECT count(*) > \(crowdedPrefix) AS crowded FROM (
                    SELECT 1 FROM places p WHERE p.retired_at IS NULL AND p.campus = \(campus) AND \(kindFilter)
                      AND p.name_key LIKE \(prefix) LIMIT \(crowdedPrefix + 1)) AS m
                """
            ).first!.decode("crowded")
            // Crowded: the nearest names the text begins and the names equal to it, joined. Otherwise every match;
            // trigram matching needs three characters, so shorter text matches name prefixes only.
            let candidates: SQL
            let matches: SQL
            if isCrowded {
                candidates = """
                    JOIN (
                        (SELECT p.id AS place_id FROM places p, here
                         WHERE p.retired_at IS NULL AND p.campus = \(campus) AND \(kindFilter) AND p.name_key LIKE \(prefix)
                         ORDER BY p.location <-> here.point LIMIT \(crowdedPrefix))
                        UNION
                        SELECT p.id FROM places p
                        WHERE p.retired_at IS NULL AND p.campus = \(campus) AND \(kindFilter) AND p.name_key = \(query)
                    ) AS candidate ON candidate.place_id = p.id
                    """
                matches = "TRUE"
            } else {
                candidates = ""
                matches =
                    query.count >= 3
                    ? "(\(query) <% p.search_text OR p.name_key LIKE \(prefix) OR p.search_text LIKE \("%" + prefix))"
                    : "p.name_key LIKE \(prefix)"
            }
            let rows = try connection.query(
                """
                WITH here AS (SELECT ST_SetSRID(ST_MakePoint(\(point.longitude), \(point.latitude)), 4326)::geography AS point)
                SELECT \(Self.placeColumns), ST_Distance(p.location, here.point) AS distance,
                    word_similarity(\(query), p.search_text)
                        + CASE WHEN p.name_key LIKE \(prefix) THEN 0.5 ELSE 0 END
                        + CASE WHEN p.name_key = \(query) THEN 0.25 ELSE 0 END
                        - least(ST_Distance(p.location, here.point) / 10000.0, 0.3) AS score
                FROM here, places p \(candidates)
                WHERE p.retired_at IS NULL AND p.campus = \(campus) AND \(kindFilter)
                  AND \(matches)
                ORDER BY score DESC, distance, p.name
                LIMIT \(limit)
                """)
            return try rows.map { try Place(row: $0) }
        }
    }

    /// Places within `radius` meters of `point`, nearest first.
    package func nearby(_ point: Coordinate, radius: Double, campus: String, kind: PlaceKind?, limit: Int) async throws
        -> [Place]
    {
        try await database.query(
            """
            WITH here AS (SELECT ST_SetSRID(ST_MakePoint(\(point.longitude), \(point.latitude)), 4326)::geography AS point)
            SELECT \(Self.placeColumns), ST_Distance(p.location, here.point) AS distance
            FROM places p, here
            WHERE p.retired_at IS NULL AND p.campus = \(campus) AND (\(kind?.rawValue)::text IS NULL OR p.kind = \(kind?.rawValue))
              AND ST_DWithin(p.location, here.point, \(radius))
            ORDER BY p.location <-> here.point
            LIMIT \(limit)
            """
        ).map { try Place(row: $0) }
    }

    package func place(id: UUID, campus: String) async throws -> Place? {
        try await database.query(
            "SELECT \(Self.placeColumns) FROM places WHERE id = \(id) AND campus = \(campus) AND retired_at IS NULL"
        ).first.map { try Place(row: $0) }
    }

    package func count() async throws -> Int {
        try await database.query("SELECT count(*) AS n FROM places WHERE retired_at IS NULL").first?.decode("n") ?? 0
    }

    // MARK: Import

    enum UpsertResult: Sendable { case added, updated, unchanged }

    /// Adds or updates a batch of places in one transaction, publishing `place.upserted` for each change.
    func upsert(_ places: [(record: PlaceRecord, campus: String, id: UUID, hash: String)]) async throws
        -> [UpsertResult]
    {
        try await database.transaction { connection in
            try places.map { place in
                let record = place.record
                let address = record.address.line
                guard
                    let row = try connection.query(
                        """
                        WITH input AS (
                            SELECT CASE WHEN \(record.outlineGeoJSON)::text IS NULL
                                THEN ST_SetSRID(ST_MakePoint(\(record.point.longitude), \(record.point.latitude)), 4326)
                                ELSE ST_PointOnSurface(ST_SetSRID(ST_GeomFromGeoJSON(\(record.outlineGeoJSON)), 4326)) END AS point
                        )
                        INSERT INTO places (id, source_key, campus, kind, subtype, cuisine, name, street, housenumber,
                            postcode, city, opening_hours, location, outline, search_text, name_key, content_hash)
                        SELECT \(place.id), \(record.sourceKey), \(place.campus), \(record.kind.rawValue), \(record.subtype),
                            \(record.cuisine), \(record.name), \(record.address.street), \(record.address.housenumber),
                            \(record.address.postcode), \(record.address.city), \(record.openingHours), input.point::geography,
                            ST_SetSRID(ST_GeomFromGeoJSON(\(record.outlineGeoJSON)), 4326)::geography,
                            lower(unaccent(\(record.name) || ' ' || \(address))), lower(unaccent(\(record.name))), \(place.hash)
                        FROM input
                        ON CONFLICT (source_key) DO UPDATE SET campus = excluded.campus, kind = excluded.kind,
                            subtype = excluded.subtype, cuisine = excluded.cuisine, name = excluded.name,
                            street = excluded.street, housenumber = excluded.housenumber, postcode = excluded.postcode,
                            city = excluded.city, opening_hours = excluded.opening_hours, location = excluded.location,
                            outline = excluded.outline, search_text = excluded.search_text, name_key = excluded.name_key,
                            content_hash = excluded.content_hash, retired_at = NULL, version = places.version + 1,
                            updated_at = now()
                        WHERE places.content_hash <> excluded.content_hash OR places.retired_at IS NOT NULL
                        RETURNING id, version, campus, name, kind, subtype,
                            ST_Y(location::geometry) AS latitude, ST_X(location::geometry) AS longitude
                        """
                    ).first
                else { return .unchanged }
                let version: Int64 = try row.decode("version")
                try Outbox.append(
                    PlaceUpserted(
                        place: PlaceSnapshot(
                            placeId: try row.decode("id"), campus: try row.decode("campus"),
                            name: try row.decode("name"),
                            kind: try row.decode("kind"), subtype: try row.decode("subtype"),
                            latitude: try row.decode("latitude"), longitude: try row.decode("longitude")),
                        version: version), on: connection)
                return version == 1 ? .added : .updated
            }
        }
    }

    /// Per campus of `campuses`, its places in service and how many of them `sourceKeys` does not hold.
    func retirement(campuses: [String], keeping sourceKeys: [String]) async throws -> [String: (
        missing: Int, total: Int
    )] {
        let rows = try await database.query(
            """
            SELECT campus, count(*) FILTER (WHERE NOT (source_key = ANY(\(sourceKeys)::text[]))) AS missing,
                count(*) AS total
            FROM places WHERE retired_at IS NULL AND campus = ANY(\(campuses)::text[]) GROUP BY campus
            """)
        return Dictionary(
            uniqueKeysWithValues: try rows.map {
                (
                    try $0.decode("campus", as: String.self),
                    (try $0.decode("missing", as: Int.self), try $0.decode("total", as: Int.self))
                )
            })
    }

    /// Retires the places of `campuses` that the import did not contain, publishing `place.retired` for each.
    func retire(campuses: [String], keeping sourceKeys: [String]) async throws -> Int {
        try await database.transaction { connection in
            let rows = try connection.query(
                """
                UPDATE places SET retired_at = now(), version = version + 1, updated_at = now()
                WHERE retired_at IS NULL AND campus = ANY(\(campuses)::text[]) AND NOT (source_key = ANY(\(sourceKeys)::text[]))
                RETURNING id, campus, version
                """)
            for row in rows {
                try Outbox.append(
                    PlaceRetired(
                        placeId: try row.decode("id"), campus: try row.decode("campus"),
                        version: try row.decode("version")),
                    on: connection)
            }
            return rows.count
        }
    }
}

extension Place {
    init(row: PostgresRow) throws {
        id = try row.decode("id")
        name = try row.decode("name")
        guard let kind = PlaceKind(rawValue: try row.decode("kind")) else { throw PostgresError.decoding("kind") }
        self.kind = kind
        subtype = try row.decode("subtype")
        cuisine = try row.decode("cuisine")
        let address = Address(
            street: try row.decode("street"), housenumber: try row.decode("housenumber"),
            postcode: try row.decode("postcode"), city: try row.decode("city"))
        self.address = address.isEmpty ? nil : address
        openingHours = try row.decode("opening_hours")
        latitude = try row.decode("latitude")
        longitude = try row.decode("longitude")
        campus = try row.decode("campus")
        distanceMeters = try? row.decode("distance", as: Double.self)
    }
}
