import Contracts
import Foundation
import MatchingCore
import Messaging
import Postgres
import ServiceKit

/// The exchange flow's data in matching's database: the only file with its SQL. Agreeing turns the listing from
/// `active` to `in_progress` with a conditional UPDATE in the transaction that inserts the exchange and its events, so
/// that of any number of takers on any number of replicas exactly one wins.
public struct ExchangePostgresRepository: Sendable {
    let database: PostgresPool

    public init(database: PostgresPool) {
        self.database = database
    }

    // MARK: Listings

    /// Lists `draft` as the caller's; a retry with the same client `id` returns the first listing.
    public func createListing(id: UUID?, _ draft: ListingDraft, caller: Identity) async throws -> Listing {
        try await database.transaction { connection in
            let listingId = id ?? UUID()
            if let existing = try Self.owner(of: listingId, on: connection) {
                guard existing == caller.userId else { throw MatchingError.conflict("That id is taken.") }
                return try Self.listing(listingId, caller: caller, on: connection)!
            }
            let location = try Self.location(of: draft.place, caller: caller, on: connection)
            try Self.requireOwnImage(draft.photoId, caller: caller, on: connection)
            let inserted = try connection.query(
                """
                \(Self.learningWords(of: draft))
                INSERT INTO exchange_listings (id, owner_id, owner_name, campus, offered, wanted, category, place_id,
                    location, photo_id, note, status, search_words)
                SELECT \(listingId)::uuid, \(caller.userId)::uuid, \(caller.name), \(caller.campus), \(draft.offered),
                    \(draft.wanted)::text[], \(draft.category.rawValue), \(location.placeId)::uuid,
                    \(Self.geography(location.point)), \(draft.photoId)::uuid, \(draft.note), 'active', words.words
                FROM words
                ON CONFLICT (id) DO NOTHING
                RETURNING id
                """)
            // A retry racing its first attempt: the first one's listing is the answer.
            guard try !inserted.isEmpty || Self.owner(of: listingId, on: connection) == caller.userId else {
                throw MatchingError.conflict("That id is taken.")
            }
            return try Self.listing(listingId, caller: caller, on: connection)!
        }
    }

    /// A listing of the caller's campus that is not withdrawn: a withdrawn listing is gone (its owner still finds it among
    /// their own).
    public func listing(_ id: UUID, caller: Identity) async throws -> Listing? {
        try await database.withConnection { connection in
            try Self.listing(id, caller: caller, on: connection).flatMap { $0.status == .withdrawn ? nil : $0 }
        }
    }

    /// The owner changes an active listing; others get 404, a listing no longer active 409.
    public func editListing(_ id: UUID, _ edit: ListingEdit, caller: Identity) async throws -> Listing {
        try await database.transaction { connection in
            guard
                let row = try connection.query(
                    """
                    SELECT owner_id, status, offered, array_to_string(wanted, chr(31)) AS wanted, category, place_id,
                        ST_Y(location::geometry) AS lat, ST_X(location::geometry) AS lon, photo_id, note
                    FROM exchange_listings
                    WHERE id = \(id) AND campus = \(caller.campus) AND owner_id = \(caller.userId)
                    FOR UPDATE
                    """
                ).first
            else { throw MatchingError.notFound("listing") }
            try Self.requireActive(try row.decode("status"))
            let point = GeoPoint(lat: try row.decode("lat"), lon: try row.decode("lon"))
            let placeId: UUID? = try row.decode("place_id")
            let current = ListingDraft(
                offered: try row.decode("offered"), wanted: try Self.wanted(row),
                category: try row.decode("category"), place: placeId.map(PlaceChoice.place) ?? .point(point),
                photoId: try row.decode("photo_id"), note: try row.decode("note"))
            let edited = edit.applied(to: current)
            // The place is looked up again only when it changes: a place retired since keeps the listing where it was.
            let location =
                edit.place == nil
                ? (point: point, placeId: placeId) : try Self.location(of: edited.place, caller: caller, on: connection)
            if edit.photoId != nil { try Self.requireOwnImage(edited.photoId, caller: caller, on: connection) }
            try connection.query(
                """
                \(Self.learningWords(of: edited))
                UPDATE exchange_listings SET offered = \(edited.offered), wanted = \(edited.wanted)::text[],
                    category = \(edited.category.rawValue), place_id = \(location.placeId)::uuid,
                    location = \(Self.geography(location.point)), photo_id = \(edited.photoId)::uuid,
                    note = \(edited.note), search_words = words.words, version = version + 1, updated_at = now()
                FROM words
                WHERE id = \(id)
                """)
            return try Self.listing(id, caller: caller, on: connection)!
        }
    }

    /// The owner takes an active listing back; others get 404, a listing no longer active 409.
    public func withdrawListing(_ id: UUID, caller: Identity) async throws -> Listing {
        try await database.transaction { connection in
            let withdrawn = try connection.query(
                """
                UPDATE exchange_listings SET status = 'withdrawn', version = version + 1, updated_at = now()
                WHERE id = \(id) AND campus = \(caller.campus) AND owner_id = \(caller.userId) AND status = 'active'
                RETURNING id
                """)
            guard !withdrawn.isEmpty else {
                guard
                    let row = try connection.query(
                        """
                        SELECT status FROM exchange_listings
                        WHERE id = \(id) AND campus = \(caller.campus) AND owner_id = \(caller.userId)
                        """
                    ).first
                else { throw MatchingError.notFound("listing") }
                try Self.requireActive(try row.decode("status"))
                throw MatchingError.notFound("listing")
            }
            return try Self.listing(id, caller: caller, on: connection)!
        }
    }

    // MARK: Browsing

    /// A page of the campus's active listings (or the caller's own of any status), filtered as `query` asks:
    /// nearest first near a point, else newest first.
    public func browse(_ query: ListingQuery, caller: Identity) async throws -> ListingPage {
        guard let text = query.text else {
            return try await database.withConnection { try Self.browse(query, words: [], caller: caller, on: $0) }
        }
        return try await database.transaction { connection in
            // The text is split in a statement of its own so that the planner sees each word as a constant it can
            // match to the indexes. NB: the same statement sets the likeness a typo needs for this transaction (the
            // default 0.6 misses a dropped letter: "fazr" scores 0.6 against "fazer", "sinnen" 0.57 against
            // "sininen"), which saves a round trip.
            let typed = try connection.query(
                """
                SELECT DISTINCT word
                FROM (SELECT set_config('pg_trgm.word_similarity_threshold', '0.45', true)) AS setting,
                    \(Self.words(of: text)) AS word
                WHERE word <> ''
                """
            ).map { try $0.decode("word", as: String.self) }
            var words: [[String]] = []
            for word in typed {
                let known = try Self.knownWords(matching: word, on: connection)
                guard !known.isEmpty else { return ListingPage(listings: [], next: nil) }
                words.append(known)
            }
            guard !words.isEmpty else { return ListingPage(listings: [], next: nil) }
            return try Self.browse(query, words: words, caller: caller, on: connection)
        }
    }

    /// How many listings a text must match to be searched newest first along the time index.
    static let crowdedMatches = 300

    /// Chooses how the newest listings matching a text are found, for the rest of the transaction. NB: the planner
    /// cannot tell how many listings hold one of a list of words, and either of its two ways is slow on the wrong
    /// text: walking the time index checks every listing until a page-full matched (all 50,000 for a rare word),
    /// and the word index fetches every match before sorting (thousands for a common word). A probe that stops at
    /// `crowdedMatches` tells which the text is; then the other way is turned off.
    static func steerTextSearch(filters: SQL, on connection: PostgresConnection) throws {
        try connection.execute(script: "SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off")
        let isCrowded: Bool = try connection.query(
            """
            SELECT count(*) >= \(crowdedMatches) AS crowded
            FROM (SELECT 1 FROM exchange_listings l WHERE \(filters) LIMIT \(crowdedMatches)) AS probe
            """
        ).first!.decode("crowded")
        if isCrowded {
            try connection.execute(script: "SET LOCAL enable_indexscan = on; SET LOCAL enable_bitmapscan = off")
        }
    }

    /// The known words a typed word stands for: those it begins (the shortest 100), or when it begins none, the 20
    /// it most resembles (a typo). A listing matches a text when it holds one of them for every typed word.
    static func knownWords(matching word: String, on connection: PostgresConnection) throws -> [String] {
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

    /// `words`: for each typed word, the known words that match it.
    static func browse(_ query: ListingQuery, words: [[String]], caller: Identity, on connection: PostgresConnection)
        throws
        -> ListingPage
    {
        let order = query.order
        if let after = query.after, after.order != order {
            throw MatchingError.invalid(field: "after", "after belongs to a browse in another order.")
        }
        var filters: SQL =
            query.isMine
            ? "l.campus = \(caller.campus) AND l.owner_id = \(caller.userId)"
            : "l.campus = \(caller.campus) AND l.status = 'active'"
        if let category = query.category {
            filters.append(" AND l.category = \(category.rawValue)")
        }
        for matches in words {
            filters.append(" AND l.search_words && \(matches)::text[]")
        }
        let page: SQL
        switch order {
        case .nearest:
            let near = query.near!
            let here = Self.geography(near)
            let distance: SQL = "(l.location <-> \(here))"
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
                WHERE \(filters) AND ST_DWithin(l.location, \(here), reach.meters + 1, false)
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
                try steerTextSearch(filters: filters, on: connection)
            }
        }
        let rows = Array(
            try connection.query(
                """
                WITH page AS (\(page))
                SELECT \(Self.listingColumns(caller: caller)), page.rank, page.created_micros
                FROM page JOIN exchange_listings l ON l.id = page.id \(Self.listingJoins)
                ORDER BY \(unescaped: order == .nearest ? "page.rank, page.id" : "page.created_micros DESC, page.id DESC")
                """))
        var listings: [Listing] = []
        var next: String?
        for (index, row) in rows.enumerated() {
            guard index < query.limit else {
                let last = rows[index - 1]
                next =
                    ListingCursor(
                        order: order, rank: try last.decode("rank"),
                        createdAtMicroseconds: try last.decode("created_micros"),
                        id: try last.decode("id")
                    ).text
                break
            }
            var listing = try Self.listing(row)
            if order == .nearest { listing.distanceMeters = try row.decode("rank") }
            listings.append(listing)
        }
        return ListingPage(listings: listings, next: next)
    }

    // MARK: Exchanges

    /// The caller agrees to an active listing of another's: the first to agree makes the exchange, everyone after
    /// them gets 409 (a retry of the winner gets its exchange again). The owner is told and the chat opens.
    public func agree(to listingId: UUID, offering: String?, caller: Identity) async throws -> Exchange {
        try await database.transaction { connection in
            guard
                let listing = try connection.query(
                    """
                    UPDATE exchange_listings SET status = 'in_progress', version = version + 1, updated_at = now()
                    WHERE id = \(listingId) AND campus = \(caller.campus) AND status = 'active'
                        AND owner_id <> \(caller.userId)
                    RETURNING owner_id, owner_name, offered, array_to_string(wanted, chr(31)) AS wanted
                    """
                ).first
            else {
                if let mine = try connection.query(
                    """
                    SELECT id FROM exchanges
                    WHERE listing_id = \(listingId) AND taker_id = \(caller.userId) AND status = 'in_progress'
                    """
                ).first {
                    return try Self.exchange(try mine.decode("id"), caller: caller, on: connection)!
                }
                throw try Self.refusalToAgree(listingId, caller: caller, on: connection)
            }
            let ownerId: UUID = try listing.decode("owner_id")
            let ownerName =
                try connection.query("SELECT name FROM users WHERE id = \(ownerId)").first?.decode(
                    "name", as: String.self)
                ?? listing.decode("owner_name")
            let offered: String = try listing.decode("offered")
            let exchangeId = UUID()
            try connection.query(
                """
                INSERT INTO exchanges (id, listing_id, campus, owner_id, taker_id, taker_name, offering, status)
                VALUES (\(exchangeId), \(listingId), \(caller.campus), \(ownerId), \(caller.userId), \(caller.name),
                    \(offering), 'in_progress')
                """)
            try Outbox.append(
                ExchangeAgreed(
                    exchangeId: exchangeId, listingId: listingId, campus: caller.campus, offered: offered,
                    ownerId: ownerId, takerId: caller.userId, takerName: caller.name, offering: offering, version: 1),
                on: connection)
            try FlowMatch(
                id: exchangeId, flow: ExchangeFlow.name, campus: caller.campus,
                members: [
                    MatchMember(userId: ownerId, name: ownerName, role: "owner"),
                    MatchMember(userId: caller.userId, name: caller.name, role: "taker"),
                ],
                subject: ExchangeRules.subject(offered: offered, offering: offering, wanted: try Self.wanted(listing))
            ).announceOpened(on: connection)
            return try Self.exchange(exchangeId, caller: caller, on: connection)!
        }
    }

    /// An exchange, to its two parties.
    public func exchange(_ id: UUID, caller: Identity) async throws -> Exchange? {
        try await database.withConnection { try Self.exchange(id, caller: caller, on: $0) }
    }

    /// Either party calls off an exchange in progress: the listing is active again, the other is told, the chat
    /// closes.
    public func cancel(_ exchangeId: UUID, caller: Identity) async throws -> Exchange {
        try await database.transaction { connection in
            guard
                let row = try connection.query(
                    """
                    UPDATE exchanges SET status = 'cancelled', cancelled_by = \(caller.userId), version = version + 1
                    WHERE id = \(exchangeId) AND campus = \(caller.campus) AND status = 'in_progress'
                        AND \(caller.userId)::uuid IN (owner_id, taker_id)
                    RETURNING listing_id, owner_id, taker_id, version
                    """
                ).first
            else {
                guard try Self.exchange(exchangeId, caller: caller, on: connection) != nil else {
                    throw MatchingError.notFound("exchange")
                }
                throw MatchingError.conflict("This exchange is no longer in progress.")
            }
            let listingId: UUID = try row.decode("listing_id")
            let (ownerId, takerId): (UUID, UUID) = (try row.decode("owner_id"), try row.decode("taker_id"))
            let version: Int64 = try row.decode("version")
            try connection.query(
                """
                UPDATE exchange_listings SET status = 'active', version = version + 1, updated_at = now()
                WHERE id = \(listingId) AND status = 'in_progress'
                """)
            try Outbox.append(
                ExchangeCancelled(
                    exchangeId: exchangeId, listingId: listingId, cancelledBy: caller.userId,
                    otherPartyId: caller.userId == ownerId ? takerId : ownerId, version: version),
                on: connection)
            try Self.match(exchangeId, caller: caller, ownerId: ownerId, takerId: takerId)
                .announceClosed(.cancelled, version: version, on: connection)
            return try Self.exchange(exchangeId, caller: caller, on: connection)!
        }
    }

    /// A party marks the exchange done; when both have, it and its listing are `exchanged` and the chat closes.
    /// Marking again changes nothing.
    public func complete(_ exchangeId: UUID, caller: Identity) async throws -> Exchange {
        try await database.transaction { connection in
            // NB: a concurrent mark by the other party is re-read under the row lock, so exactly one of two
            // simultaneous marks sees both done.
            guard
                let row = try connection.query(
                    """
                    UPDATE exchanges SET owner_completed = owner_completed OR owner_id = \(caller.userId),
                        taker_completed = taker_completed OR taker_id = \(caller.userId),
                        status = CASE WHEN (owner_completed OR owner_id = \(caller.userId))
                            AND (taker_completed OR taker_id = \(caller.userId)) THEN 'exchanged' ELSE status END,
                        version = version + 1
                    WHERE id = \(exchangeId) AND campus = \(caller.campus) AND status = 'in_progress'
                        AND \(caller.userId)::uuid IN (owner_id, taker_id)
                        AND NOT CASE WHEN owner_id = \(caller.userId) THEN owner_completed ELSE taker_completed END
                    RETURNING listing_id, owner_id, taker_id, status, version
                    """
                ).first
            else {
                guard let exchange = try Self.exchange(exchangeId, caller: caller, on: connection) else {
                    throw MatchingError.notFound("exchange")
                }
                guard exchange.status != .cancelled else {
                    throw MatchingError.conflict("This exchange was cancelled.")
                }
                return exchange
            }
            if try row.decode("status", as: ExchangeStatus.self) == .exchanged {
                let listingId: UUID = try row.decode("listing_id")
                let (ownerId, takerId): (UUID, UUID) = (try row.decode("owner_id"), try row.decode("taker_id"))
                let version: Int64 = try row.decode("version")
                try connection.query(
                    """
                    UPDATE exchange_listings SET status = 'exchanged', version = version + 1, updated_at = now()
                    WHERE id = \(listingId)
                    """)
                try Outbox.append(
                    ExchangeCompleted(
                        exchangeId: exchangeId, listingId: listingId, partyIds: [ownerId, takerId], version: version),
                    on: connection)
                try Self.match(exchangeId, caller: caller, ownerId: ownerId, takerId: takerId)
                    .announceClosed(.completed, version: version, on: connection)
            }
            return try Self.exchange(exchangeId, caller: caller, on: connection)!
        }
    }

    /// A party reviews the other once the exchange is done, once; the other's rating counts it.
    public func review(_ exchangeId: UUID, stars: Int, text: String?, caller: Identity) async throws -> ExchangeReview {
        try await database.transaction { connection in
            guard let exchange = try Self.exchange(exchangeId, caller: caller, on: connection) else {
                throw MatchingError.notFound("exchange")
            }
            guard exchange.status == .exchanged else {
                throw MatchingError.conflict("An exchange can be reviewed once both have marked it done.")
            }
            let revieweeId = exchange.owner.id == caller.userId ? exchange.taker.id : exchange.owner.id
            guard
                let row = try connection.query(
                    """
                    INSERT INTO exchange_reviews (exchange_id, reviewer_id, reviewee_id, stars, text)
                    VALUES (\(exchangeId), \(caller.userId), \(revieweeId), \(stars), \(text))
                    ON CONFLICT DO NOTHING
                    RETURNING created_at
                    """
                ).first
            else { throw MatchingError.conflict("You already reviewed this exchange.") }
            try connection.query(
                """
                INSERT INTO exchange_ratings AS r (user_id, reviews, stars) VALUES (\(revieweeId), 1, \(stars))
                ON CONFLICT (user_id) DO UPDATE SET reviews = r.reviews + 1, stars = r.stars + excluded.stars
                """)
            return ExchangeReview(
                exchangeId: exchangeId, reviewerId: caller.userId, revieweeId: revieweeId, stars: stars, text: text,
                createdAt: try row.decode("created_at"))
        }
    }

    // MARK: Rows

    /// The columns of a listing as `caller` sees it, over `listingJoins`.
    static func listingColumns(caller: Identity) -> SQL {
        """
        l.id, l.owner_id, coalesce(u.name, l.owner_name) AS owner_name, u.photo_id AS owner_photo_id,
            CASE WHEN r.reviews > 0 THEN round(r.stars::numeric / r.reviews, 2)::double precision END AS rating,
            coalesce(r.reviews, 0) AS reviews, l.offered, array_to_string(l.wanted, chr(31)) AS wanted, l.category,
            ST_Y(l.location::geometry) AS lat, ST_X(l.location::geometry) AS lon, l.place_id, p.name AS place_name,
            l.photo_id, l.note, l.status, l.created_at, l.updated_at,
            (SELECT e.id FROM exchanges e
             WHERE e.listing_id = l.id AND e.status <> 'cancelled' AND \(caller.userId)::uuid IN (e.owner_id, e.taker_id)
            ) AS exchange_id
        """
    }

    static let listingJoins: SQL = """
        LEFT JOIN users u ON u.id = l.owner_id LEFT JOIN exchange_ratings r ON r.user_id = l.owner_id
        LEFT JOIN places p ON p.id = l.place_id
        """

    static func listing(_ id: UUID, caller: Identity, on connection: PostgresConnection) throws -> Listing? {
        try connection.query(
            """
            SELECT \(listingColumns(caller: caller))
            FROM exchange_listings l \(listingJoins)
            WHERE l.id = \(id) AND l.campus = \(caller.campus)
                AND (l.status <> 'withdrawn' OR l.owner_id = \(caller.userId))
            """
        ).first.map(listing)
    }

    static func listing(_ row: PostgresRow) throws -> Listing {
        Listing(
            id: try row.decode("id"),
            owner: ListingOwner(
                id: try row.decode("owner_id"), name: try row.decode("owner_name"),
                photoId: try row.decode("owner_photo_id"), rating: try row.decode("rating"),
                reviews: try row.decode("reviews")),
            offered: try row.decode("offered"), wanted: try wanted(row), category: try row.decode("category"),
            place: ListingPlace(
                lat: try row.decode("lat"), lon: try row.decode("lon"), placeId: try row.decode("place_id"),
                name: try row.decode("place_name")),
            photoId: try row.decode("photo_id"), note: try row.decode("note"), status: try row.decode("status"),
            exchangeId: try row.decode("exchange_id"), distanceMeters: nil, createdAt: try row.decode("created_at"),
            updatedAt: try row.decode("updated_at"))
    }

    static func exchange(_ id: UUID, caller: Identity, on connection: PostgresConnection) throws -> Exchange? {
        try connection.query(
            """
            SELECT e.id, e.listing_id, l.offered, e.offering, e.status, e.created_at,
                e.owner_id, coalesce(uo.name, l.owner_name) AS owner_name, e.owner_completed,
                e.taker_id, coalesce(ut.name, e.taker_name) AS taker_name, e.taker_completed,
                EXISTS (SELECT 1 FROM exchange_reviews v WHERE v.exchange_id = e.id AND v.reviewer_id = e.owner_id)
                    AS owner_reviewed,
                EXISTS (SELECT 1 FROM exchange_reviews v WHERE v.exchange_id = e.id AND v.reviewer_id = e.taker_id)
                    AS taker_reviewed
            FROM exchanges e JOIN exchange_listings l ON l.id = e.listing_id
                LEFT JOIN users uo ON uo.id = e.owner_id LEFT JOIN users ut ON ut.id = e.taker_id
            WHERE e.id = \(id) AND e.campus = \(caller.campus) AND \(caller.userId)::uuid IN (e.owner_id, e.taker_id)
            """
        ).first.map { row in
            Exchange(
                id: try row.decode("id"), listingId: try row.decode("listing_id"), offered: try row.decode("offered"),
                offering: try row.decode("offering"), status: try row.decode("status"),
                owner: ExchangeParty(
                    id: try row.decode("owner_id"), name: try row.decode("owner_name"),
                    completed: try row.decode("owner_completed"), reviewed: try row.decode("owner_reviewed")),
                taker: ExchangeParty(
                    id: try row.decode("taker_id"), name: try row.decode("taker_name"),
                    completed: try row.decode("taker_completed"), reviewed: try row.decode("taker_reviewed")),
                createdAt: try row.decode("created_at"))
        }
    }

    /// Why the caller cannot agree to a listing: it is not theirs to see (404), it is their own, or someone was first.
    static func refusalToAgree(_ listingId: UUID, caller: Identity, on connection: PostgresConnection) throws
        -> MatchingError
    {
        guard let listing = try listing(listingId, caller: caller, on: connection) else { return .notFound("listing") }
        if listing.owner.id == caller.userId { return .conflict("You cannot agree to your own listing.") }
        return .conflict("Someone else agreed to this listing first.")
    }

    /// The exchange as the match its chat belongs to; closing needs only the members' ids.
    static func match(_ exchangeId: UUID, caller: Identity, ownerId: UUID, takerId: UUID) -> FlowMatch {
        FlowMatch(
            id: exchangeId, flow: ExchangeFlow.name, campus: caller.campus,
            members: [
                MatchMember(userId: ownerId, name: "", role: "owner"),
                MatchMember(userId: takerId, name: "", role: "taker"),
            ],
            subject: "")
    }

    static func owner(of listingId: UUID, on connection: PostgresConnection) throws -> UUID? {
        try connection.query("SELECT owner_id FROM exchange_listings WHERE id = \(listingId)").first?.decode("owner_id")
    }

    static func requireActive(_ status: ListingStatus) throws {
        guard status == .active else {
            throw MatchingError.conflict("Only an active listing can be changed; this one is \(status.rawValue).")
        }
    }

    /// The point of a place choice: the point itself, or a live place of the caller's campus (404 naming `place`).
    static func location(of place: PlaceChoice, caller: Identity, on connection: PostgresConnection) throws
        -> (point: GeoPoint, placeId: UUID?)
    {
        try ReadModels.location(of: place, campus: caller.campus, what: "place", on: connection)
    }

    /// 404 naming `photoId` unless it is an image the caller stored and has not deleted.
    static func requireOwnImage(_ photoId: UUID?, caller: Identity, on connection: PostgresConnection) throws {
        guard let photoId else { return }
        guard try ReadModels.isOwnImage(photoId, owner: caller.userId, on: connection) else {
            throw MatchingError.notFound("photoId; upload the image with POST /v1/media first")
        }
    }

    static func geography(_ point: GeoPoint) -> SQL {
        point.geography
    }

    /// The words of `text` as a search compares them: lower case, without accents, split at spaces and punctuation
    /// (so that a typed word never holds a LIKE wildcard).
    static func words(of text: String) -> SQL {
        "regexp_split_to_table(lower(unaccent(\(text))), '[[:space:][:punct:]]+')"
    }

    /// A `WITH words AS (...)` whose one row holds the draft's words (its `words` column), which also adds those
    /// words to the known ones. NB: they are added in order, so that two listings adding the same new words wait for
    /// each other instead of deadlocking.
    static func learningWords(of draft: ListingDraft) -> SQL {
        """
        WITH words AS (
            SELECT coalesce(array_agg(DISTINCT word ORDER BY word), '{}') AS words
            FROM \(words(of: ([draft.offered] + draft.wanted).joined(separator: " "))) AS word
            WHERE word <> ''
        ), learned AS (
            INSERT INTO exchange_words (word) SELECT unnest(words) AS word FROM words ORDER BY word ON CONFLICT DO NOTHING
        )
        """
    }

    /// Wanted items cannot hold control characters, so the array travels as one text joined by U+001F.
    static func wanted(_ row: PostgresRow) throws -> [String] {
        try row.decode("wanted", as: String.self).split(separator: "\u{1F}").map(String.init)
    }
}
