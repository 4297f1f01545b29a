import Contracts
import Foundation
import Messaging
import Postgres

/// Places' data in its own PostgreSQL database with PostGIS and pg_trgm: with `+search`, the only file with SQL.
package struct PlacePostgresRepository: Sendable {
    let database: PostgresPool
    /// How many of the names a typed text begins are scored: the nearest that many, with those equal to the text.
    var prefixCandidates = 50
    /// How many names a typed text may begin and still be found by name; past it, the nearest are found by distance.
    var crowdedPrefix = 1_000

    package init(database: PostgresPool, prefixCandidates: Int = 50, crowdedPrefix: Int = 1_000) {
        self.database = database
        self.prefixCandidates = prefixCandidates
        self.crowdedPrefix = crowdedPrefix
    }

    /// Places' own migrations, to run after the outbox's and the inbox's.
    package static let migrations = Bundle.module.url(forResource: "Migrations", withExtension: nil)!

    static let placeColumns: SQL = """
        id, name, kind, subtype, cuisine, street, housenumber, postcode, city, opening_hours, campus,
        ST_Y(location::geometry) AS latitude, ST_X(location::geometry) AS longitude
        """

    // MARK: Nearby

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
