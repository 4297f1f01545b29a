import Foundation
import Postgres

/// Search as the user types: the best of the names the text begins, then the places it only resembles that can
/// still rank among them.
extension PlacePostgresRepository {
    /// Places whose name or address matches `text` as typed (prefixes, a typo, any accents or case), best match
    /// first with nearer places ahead among similar matches.
    ///
    /// A place scores how much its text resembles the query (0 to 1), 0.5 more when the query begins its name and
    /// 0.25 more when it is the name, and up to 0.3 less for its distance (0.1 a kilometre). Only the nearest
    /// `prefixCandidates` names the query begins are scored, with the names equal to it: a city's "rav" begins
    /// thousands, and scoring them all took most of a second. The other places are looked for only as far as they
    /// can rank among the best of those (`PlaceQuery.reach`), which a text that begins many names seldom allows.
    package func search(text: String, near point: Coordinate, campus: String, kind: PlaceKind?, limit: Int) async throws
        -> [Place]
    {
        try await database.transaction { [prefixCandidates, crowdedPrefix] connection in
            // The text is normalised in a statement of its own so that the search sees it as a constant it can match
            // to the indexes; the same statement sets how the search runs, for this transaction: the likeness of the
            // trigram operator, and a plan for each text rather than one for all, as how the search is best run
            // depends on the text (how many names it begins). The estimated cost of looking through every place the
            // text resembles passes the thresholds of compiling the plan (which took half a second) and of parallel
            // workers (a fifth of one to start), though it mostly takes milliseconds: neither is used.
            let query: String = try connection.query(
                """
                SELECT set_config('pg_trgm.word_similarity_threshold', \(String(PlaceQuery.likeness)), true),
                    set_config('plan_cache_mode', 'force_custom_plan', true), set_config('jit', 'off', true),
                    set_config('max_parallel_workers_per_gather', '0', true), lower(unaccent(\(text))) AS q
                """
            ).first!.decode("q")
            let search = SearchStatements(query: query, near: point, campus: campus, kind: kind, limit: limit)
            let candidates = try connection.query(
                search.candidates(prefixCandidates: prefixCandidates, crowdedPrefix: crowdedPrefix))
            // Trigram matching needs three characters: shorter text matches the names it begins only.
            guard query.count >= 3 else { return try candidates.map { try Place(row: $0) } }
            let page: PostgresRows
            switch PlaceQuery.reach(beside: try Self.scores(of: candidates), limit: limit) {
            case .nowhere:
                page = candidates
            case .within(let meters) where meters <= PlaceQuery.widestNearSearch:
                page = try connection.query(search.page(with: candidates, within: meters))
            case .within, .anywhere:
                page = try Self.pageOfOthers(beside: candidates, search, on: connection)
            }
            return try page.map { try Place(row: $0) }
        }
    }

    /// The best of the `candidates` and of all the places the text only resembles. When the text begins some names
    /// but too few to fill the page, it often resembles thousands of others ("mitoto" every word that begins
    /// "mito"), all to be scored: so those that resemble it closely are found first, and they bound how near one
    /// that resembles it less must lie to rank, which seldom leaves any.
    private static func pageOfOthers(
        beside candidates: PostgresRows, _ search: SearchStatements, on connection: PostgresConnection
    ) throws -> PostgresRows {
        if !candidates.isEmpty {
            for likeness in PlaceQuery.closeLikenesses {
                try connection.query(SearchStatements.settingLikeness(to: likeness))
                let close = try connection.query(search.page(with: candidates))
                switch PlaceQuery.reach(beside: try scores(of: close), limit: search.limit, best: likeness) {
                case .nowhere:
                    return close
                case .within(let meters) where meters <= PlaceQuery.widestNearSearch:
                    return try connection.query(search.page(with: close, within: meters))
                case .within, .anywhere:
                    continue
                }
            }
            try connection.query(SearchStatements.settingLikeness(to: PlaceQuery.likeness))
        }
        return try connection.query(search.page(with: candidates))
    }

    private static func scores(of rows: PostgresRows) throws -> [Double] {
        try rows.map { try $0.decode("score", as: Double.self) }
    }
}

/// The statements of one search for `query` (lower case, without accents), all scoring places alike.
private struct SearchStatements {
    let query: String
    let limit: Int
    let here: SQL
    let onCampus: SQL
    /// The LIKE pattern of the names the query begins.
    let prefix: String
    let scored: SQL

    init(query: String, near point: Coordinate, campus: String, kind: PlaceKind?, limit: Int) {
        self.query = query
        self.limit = limit
        here = "ST_SetSRID(ST_MakePoint(\(point.longitude), \(point.latitude)), 4326)::geography"
        var onCampus: SQL = "p.retired_at IS NULL AND p.campus = \(campus)"
        if let kind {
            onCampus.append(" AND p.kind = \(kind.rawValue)")
        }
        self.onCampus = onCampus
        prefix = PlaceQuery.likeEscaped(query) + "%"
        let distance: SQL = "ST_Distance(p.location, \(here))"
        scored = """
            SELECT \(PlacePostgresRepository.placeColumns), \(distance) AS distance,
                word_similarity(\(query), p.search_text)
                    + CASE WHEN p.name_key LIKE \(prefix) THEN 0.5 ELSE 0 END
                    + CASE WHEN p.name_key = \(query) THEN 0.25 ELSE 0 END
                    - least(\(distance) / 10000.0, 0.3) AS score
            """
    }

    /// The best `limit` of the nearest `prefixCandidates` names the query begins and of the names equal to it, best
    /// first. The nearest are sorted out of those found by name when they are at most `crowdedPrefix`; otherwise
    /// they are found by walking the locations outwards from the searcher, which skips the names the query does not
    /// begin inside the index.
    func candidates(prefixCandidates: Int, crowdedPrefix: Int) -> SQL {
        // The names the query begins, as a range of names in code point order. NB: each search for them says which
        // index it means by its operators (`~>=~` only the name index answers, `COLLATE "C"` only the index of
        // locations and names), for the planner misjudges the latter: for a text that begins a handful of names it
        // expects a few pages, and reads all of it.
        var byName: SQL = "p.name_key ~>=~ \(query)"
        var byLocation: SQL = "p.name_key COLLATE \"C\" >= \(query)"
        if let end = PlaceQuery.prefixEnd(of: query) {
            byName.append(" AND p.name_key ~<~ \(end)")
            byLocation.append(" AND p.name_key COLLATE \"C\" < \(end)")
        }
        return """
            WITH named AS MATERIALIZED (
                SELECT p.id, p.location FROM places p WHERE \(onCampus) AND \(byName) LIMIT \(crowdedPrefix + 1)
            ), begun AS (
                (SELECT id AS place_id FROM named WHERE (SELECT count(*) FROM named) <= \(crowdedPrefix)
                 ORDER BY location <-> \(here) LIMIT \(prefixCandidates))
                UNION ALL
                (SELECT p.id FROM places p
                 WHERE (SELECT count(*) FROM named) > \(crowdedPrefix) AND \(onCampus) AND \(byLocation)
                 ORDER BY p.location <-> \(here) LIMIT \(prefixCandidates))
                UNION
                SELECT p.id FROM places p WHERE \(onCampus) AND p.name_key = \(query)
            )
            \(scored)
            FROM begun JOIN places p ON p.id = begun.place_id
            ORDER BY score DESC, distance, p.name
            LIMIT \(limit)
            """
    }

    /// The best `limit` of the `candidates` and of the places within `meters` of the searcher that the query only
    /// resembles, best first. NB: the likeness is worked out rather than asked of the trigram index, which the
    /// planner would otherwise read for every resembling place in the city (it expects few) and then keep the near.
    func page(with candidates: PostgresRows, within meters: Double) throws -> SQL {
        let ids = try ids(of: candidates)
        return """
            SELECT * FROM (
                \(scored) FROM places p WHERE p.id = ANY(\(ids)::uuid[])
                UNION ALL
                \(scored) FROM places p
                WHERE \(onCampus) AND p.name_key NOT LIKE \(prefix) AND ST_DWithin(p.location, \(here), \(meters))
                  AND p.id <> ALL(\(ids)::uuid[])
                  AND (word_similarity(\(query), p.search_text) >= \(PlaceQuery.likeness)::double precision
                      OR strpos(p.search_text, \(query)) > 0)
            ) AS page
            ORDER BY score DESC, distance, name
            LIMIT \(limit)
            """
    }

    /// The best `limit` of the `candidates` and of all the places the query only resembles, best first.
    ///
    /// A text of a few letters resembles thousands of places, each scored. So they are first ranked roughly, with
    /// their distance on a sphere (within 0.6% of `ST_Distance`'s on the spheroid, which moves a score by at most
    /// 0.002), and only those that can be among the best `limit` are scored. NB: those that hold its
    /// trigrams and those that hold it as it is are two parts, so that the likeness, which only the trigram index
    /// can answer, is not worked out once more for every place.
    func page(with candidates: PostgresRows) throws -> SQL {
        let rough: SQL = """
            SELECT p.id AS place_id,
                word_similarity(\(query), p.search_text) - least((p.location <-> \(here)) / 10000.0, 0.3) AS rough
            FROM places p WHERE \(onCampus) AND p.name_key NOT LIKE \(prefix)
            """
        return """
            WITH others AS MATERIALIZED (
                \(rough) AND \(query) <% p.search_text
                UNION ALL
                \(rough) AND p.search_text LIKE \("%" + prefix) AND NOT (\(query) <% p.search_text)
            ), bar AS (
                SELECT rough FROM others ORDER BY rough DESC OFFSET \(limit - 1) LIMIT 1
            )
            SELECT * FROM (
                \(scored) FROM places p WHERE p.id = ANY(\(try ids(of: candidates))::uuid[])
                UNION ALL
                \(scored) FROM others JOIN places p ON p.id = others.place_id
                WHERE others.rough >= coalesce((SELECT rough FROM bar) - 0.005, -1)
            ) AS page
            ORDER BY score DESC, distance, name
            LIMIT \(limit)
            """
    }

    /// The statement that sets how much a place's text must resemble the query to match `<%`, for the rest of the
    /// transaction.
    static func settingLikeness(to likeness: Double) -> SQL {
        "SELECT set_config('pg_trgm.word_similarity_threshold', \(String(likeness)), true)"
    }

    private func ids(of candidates: PostgresRows) throws -> [String] {
        try candidates.map { try $0.decode("id", as: UUID.self).uuidString }
    }
}
