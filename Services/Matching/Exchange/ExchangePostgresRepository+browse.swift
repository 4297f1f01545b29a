import Foundation
import MatchingCore
import Postgres
import ServiceKit

/// Browsing and searching the listings: the words of a text, and a page in either order.
extension ExchangePostgresRepository {
    /// How many listings a text must match to be searched newest first along the time index.
    static let crowdedMatches = 300

    /// The distinct words of a typed text. NB: split in a statement of its own so that the planner sees each word as a
    /// constant it can match to the indexes; the same statement sets the likeness a typo needs for this transaction
    /// (the default 0.6 misses a dropped letter: "fazr" scores 0.6 against "fazer", "sinnen" 0.57 against "sininen"),
    /// which saves a round trip.
    func typedWords(_ text: String) throws -> [String] {
        try connection.query(
            """
            SELECT DISTINCT word
            FROM (SELECT set_config('pg_trgm.word_similarity_threshold', '0.45', true)) AS setting,
                \(Self.words(of: text)) AS word
            WHERE word <> ''
            """
        ).map { try $0.decode("word", as: String.self) }
    }

    /// The known words a typed word stands for: those it begins (the shortest 100), or when it begins none, the 20
    /// it most resembles (a typo). A listing matches a text when it holds one of them for every typed word.
    func knownWords(matching word: String) throws -> [String] {
        // NB: typed words hold no punctuation, so no LIKE wildcard either.
        try connection.query(
            """
            WITH begun AS (
                SELECT word FROM exchange_words WHERE word LIKE \(word + "%") ORDER BY length(word), word LIMIT 100
            )
            SELECT word FROM begun
            UNION ALL
            (SELECT word FROM exchange_words WHERE NOT EXISTS (SELECT FROM begun) AND \(word) <% word
             ORDER BY word_similarity(\(word), word) DESC, word LIMIT 20)
            """
        ).map { try $0.decode("word", as: String.self) }
    }

    /// Up to `query.limit + 1` listings in the query's order after its cursor, each with its sort keys; none of anyone
    /// in a block with the caller. `words`: for each typed word, the known words that match it.
    func page(_ query: ListingQuery, words: [[String]], caller: Identity) throws
        -> [(listing: Listing, rank: Double, createdAtMicroseconds: Int64)]
    {
        var filters: SQL =
            query.isMine
            ? "l.campus = \(caller.campus) AND l.owner_id = \(caller.userId)"
            : """
            l.campus = \(caller.campus) AND l.status = 'active'
                AND (l.owner_id = \(caller.userId) OR \(ReadModels.unblocked("l.owner_id", "\(caller.userId)::uuid")))
            """
        if let category = query.category {
            filters.append(" AND l.category = \(category.rawValue)")
        }
        for matches in words {
            filters.append(" AND l.search_words && \(matches)::text[]")
        }
        let page: SQL
        switch query.order {
        case .nearest:
            let near = query.near!
            let distance: SQL = "(l.location <-> \(near.geography))"
            if let after = query.after {
                filters.append(" AND (\(distance), l.id) > (\(after.rank)::double precision, \(after.id)::uuid)")
            }
            // NB: ordered by distance and id, a page is sorted from every listing in the radius (thousands on a busy
            // campus), and the planner, misjudging how many ST_DWithin keeps, will not walk the index in distance
            // order. So the nearest page-full is found by distance alone (the index's order, within a box around the
            // circle), and then everything up to the farthest of them is sorted by distance and id, ties included
            // (ST_DWithin, a metre wider, only lets the index find them).
            page = """
                WITH reach AS (
                    SELECT coalesce(max(nearest.distance), \(query.radiusMeters)::double precision) AS meters
                    FROM (
                        SELECT \(distance) AS distance FROM exchange_listings l
                        WHERE \(filters)
                            AND l.location && \(near.box(meters: query.radiusMeters))
                            AND \(distance) <= \(query.radiusMeters)::double precision
                        ORDER BY \(distance)
                        LIMIT \(query.limit + 1)
                    ) AS nearest
                )
                SELECT l.id, \(distance) AS rank, (extract(epoch FROM l.created_at) * 1000000)::bigint AS created_micros
                FROM reach, exchange_listings l
                WHERE \(filters) AND ST_DWithin(l.location, \(near.geography), reach.meters + 1, false)
                    AND \(distance) <= reach.meters
                ORDER BY \(distance), l.id
                LIMIT \(query.limit + 1)
                """
        case .newest:
            if let after = query.after {
                filters.append(
                    """
                     AND (l.created_at, l.id) < (timestamptz 'epoch' + \(after.createdAtMicroseconds)::double precision
                        * interval '1 microsecond', \(after.id)::uuid)
                    """)
            }
            page = """
                SELECT l.id, 0::double precision AS rank,
                    (extract(epoch FROM l.created_at) * 1000000)::bigint AS created_micros
                FROM exchange_listings l
                WHERE \(filters)
                ORDER BY l.created_at DESC, l.id DESC
                LIMIT \(query.limit + 1)
                """
            if !words.isEmpty {
                try steerTextSearch(filters: filters)
            }
        }
        return try connection.query(
            """
            WITH page AS (\(page))
            SELECT \(Self.listingColumns(caller: caller)), page.rank, page.created_micros
            FROM page JOIN exchange_listings l ON l.id = page.id \(Self.listingJoins)
            ORDER BY \(unescaped: query.order == .nearest ? "page.rank, page.id" : "page.created_micros DESC, page.id DESC")
            """
        ).map { row in (try Self.listing(row), try row.decode("rank"), try row.decode("created_micros")) }
    }

    /// Chooses how the newest listings matching a text are found, for the rest of the transaction. NB: the planner
    /// cannot tell how many listings hold one of a list of words, and either of its two ways is slow on the wrong
    /// text: walking the time index checks every listing until a page-full matched (all 50,000 for a rare word),
    /// and the word index fetches every match before sorting (thousands for a common word). A probe that stops at
    /// `crowdedMatches` tells which the text is; then the other way is turned off.
    private func steerTextSearch(filters: SQL) throws {
        try connection.execute(script: "SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off")
        let isCrowded: Bool = try connection.query(
            """
            SELECT count(*) >= \(Self.crowdedMatches) AS crowded
            FROM (SELECT 1 FROM exchange_listings l WHERE \(filters) LIMIT \(Self.crowdedMatches)) AS probe
            """
        ).first!.decode("crowded")
        if isCrowded {
            try connection.execute(script: "SET LOCAL enable_indexscan = on; SET LOCAL enable_bitmapscan = off")
        }
    }
}
