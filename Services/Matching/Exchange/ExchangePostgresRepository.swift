import Foundation
import MatchingCore
import Postgres
import ServiceKit

/// The exchange flow's SQL and row decoding, on one connection (inside the steps' transaction): reads, locks and
/// writes, each one statement, with no decisions of their own.
struct ExchangePostgresRepository {
    let connection: PostgresConnection

    /// A listing under its row lock: who owns it, where it is in its life, where it is, and what it holds.
    struct LockedListing {
        var ownerId: UUID
        /// The name it was listed under (`userName` has the current one).
        var ownerName: String
        var status: ListingStatus
        var point: GeoPoint
        var placeId: UUID?
        var draft: ListingDraft
    }

    // MARK: Listings

    func owner(of listingId: UUID) throws -> UUID? {
        try connection.query("SELECT owner_id FROM exchange_listings WHERE id = \(listingId)").first?.decode("owner_id")
    }

    /// Inserts an active listing unless its id is taken; whether it did.
    func insertListing(
        _ id: UUID, _ draft: ListingDraft, at location: (point: GeoPoint, placeId: UUID?), caller: Identity
    ) throws -> Bool {
        try !connection.query(
            """
            \(Self.learningWords(of: draft))
            INSERT INTO exchange_listings (id, owner_id, owner_name, campus, offered, wanted, category, place_id,
                location, photo_id, note, status, search_words)
            SELECT \(id)::uuid, \(caller.userId)::uuid, \(caller.name), \(caller.campus), \(draft.offered),
                \(draft.wanted)::text[], \(draft.category.rawValue), \(location.placeId)::uuid,
                \(location.point.geography), \(draft.photoId)::uuid, \(draft.note), 'active', words.words
            FROM words
            ON CONFLICT (id) DO NOTHING
            RETURNING id
            """
        ).isEmpty
    }

    /// A listing of the caller's campus as they see it (a withdrawn one only when it is theirs; none of anyone in a
    /// block with them).
    func listing(_ id: UUID, caller: Identity) throws -> Listing? {
        try connection.query(
            """
            SELECT \(Self.listingColumns(caller: caller))
            FROM exchange_listings l \(Self.listingJoins)
            WHERE l.id = \(id) AND l.campus = \(caller.campus)
                AND (l.status <> 'withdrawn' OR l.owner_id = \(caller.userId))
                AND (l.owner_id = \(caller.userId) OR \(ReadModels.unblocked("l.owner_id", "\(caller.userId)::uuid")))
            """
        ).first.map(Self.listing)
    }

    /// A listing of `campus` locked for a change.
    func lockListing(_ id: UUID, campus: String) throws -> LockedListing? {
        try connection.query(
            """
            SELECT owner_id, owner_name, status, offered, array_to_string(wanted, chr(31)) AS wanted, category,
                place_id, ST_Y(location::geometry) AS lat, ST_X(location::geometry) AS lon, photo_id, note
            FROM exchange_listings
            WHERE id = \(id) AND campus = \(campus)
            FOR UPDATE
            """
        ).first.map { row in
            let placeId: UUID? = try row.decode("place_id")
            let point = GeoPoint(lat: try row.decode("lat"), lon: try row.decode("lon"))
            return LockedListing(
                ownerId: try row.decode("owner_id"), ownerName: try row.decode("owner_name"),
                status: try row.decode("status"), point: point, placeId: placeId,
                draft: ListingDraft(
                    offered: try row.decode("offered"), wanted: try Self.wanted(row),
                    category: try row.decode("category"), place: placeId.map(PlaceChoice.place) ?? .point(point),
                    photoId: try row.decode("photo_id"), note: try row.decode("note")))
        }
    }

    func updateListing(_ id: UUID, to draft: ListingDraft, at location: (point: GeoPoint, placeId: UUID?)) throws {
        try connection.query(
            """
            \(Self.learningWords(of: draft))
            UPDATE exchange_listings SET offered = \(draft.offered), wanted = \(draft.wanted)::text[],
                category = \(draft.category.rawValue), place_id = \(location.placeId)::uuid,
                location = \(location.point.geography), photo_id = \(draft.photoId)::uuid,
                note = \(draft.note), search_words = words.words, version = version + 1, updated_at = now()
            FROM words
            WHERE id = \(id)
            """)
    }

    func setListingStatus(_ id: UUID, _ status: ListingStatus) throws {
        try connection.query(
            """
            UPDATE exchange_listings SET status = \(status.rawValue), version = version + 1, updated_at = now()
            WHERE id = \(id)
            """)
    }

    /// The name a student goes by now, nil when they have no account any more.
    func userName(_ id: UUID) throws -> String? {
        try connection.query("SELECT name FROM users WHERE id = \(id)").first?.decode("name")
    }

    // MARK: Exchanges

    /// The exchange in progress that `takerId` made of a listing.
    func exchangeInProgress(listingId: UUID, takerId: UUID) throws -> UUID? {
        try connection.query(
            """
            SELECT id FROM exchanges
            WHERE listing_id = \(listingId) AND taker_id = \(takerId) AND status = 'in_progress'
            """
        ).first?.decode("id")
    }

    func insertExchange(_ id: UUID, listingId: UUID, ownerId: UUID, offering: String?, caller: Identity) throws {
        try connection.query(
            """
            INSERT INTO exchanges (id, listing_id, campus, owner_id, taker_id, taker_name, offering, status)
            VALUES (\(id), \(listingId), \(caller.campus), \(ownerId), \(caller.userId), \(caller.name),
                \(offering), 'in_progress')
            """)
    }

    /// Takes the lock that agreeing and a block's closing take of a pair of students, for the rest of the transaction.
    func lockPair(_ first: UUID, _ second: UUID) throws {
        try connection.query(
            """
            SELECT pg_advisory_xact_lock(hashtextextended('exchange' ||
                least(\(first)::uuid, \(second)::uuid)::text || greatest(\(first)::uuid, \(second)::uuid)::text, 0))
            """)
    }

    /// The exchanges in progress between two students, either side, locked for a change.
    func lockExchangesInProgress(between a: UUID, _ b: UUID) throws
        -> [(id: UUID, listingId: UUID, campus: String, ownerId: UUID, takerId: UUID, progress: ExchangeProgress)]
    {
        try connection.query(
            """
            SELECT id, listing_id, campus, owner_id, taker_id, status, owner_completed, taker_completed FROM exchanges
            WHERE status = 'in_progress'
                AND ((owner_id = \(a) AND taker_id = \(b)) OR (owner_id = \(b) AND taker_id = \(a)))
            ORDER BY id
            FOR UPDATE
            """
        ).map { row in
            (
                try row.decode("id"), try row.decode("listing_id"), try row.decode("campus"),
                try row.decode("owner_id"), try row.decode("taker_id"),
                ExchangeProgress(
                    status: try row.decode("status"), ownerCompleted: try row.decode("owner_completed"),
                    takerCompleted: try row.decode("taker_completed"))
            )
        }
    }

    /// An exchange of the caller's campus locked for a change, when the caller is one of its parties.
    func lockExchange(_ id: UUID, caller: Identity) throws
        -> (listingId: UUID, ownerId: UUID, takerId: UUID, progress: ExchangeProgress)?
    {
        try connection.query(
            """
            SELECT listing_id, owner_id, taker_id, status, owner_completed, taker_completed FROM exchanges
            WHERE id = \(id) AND campus = \(caller.campus) AND \(caller.userId)::uuid IN (owner_id, taker_id)
            FOR UPDATE
            """
        ).first.map { row in
            (
                try row.decode("listing_id"), try row.decode("owner_id"), try row.decode("taker_id"),
                ExchangeProgress(
                    status: try row.decode("status"), ownerCompleted: try row.decode("owner_completed"),
                    takerCompleted: try row.decode("taker_completed"))
            )
        }
    }

    /// Writes the exchange's progress (and who called it off); its new version.
    func updateExchange(_ id: UUID, to progress: ExchangeProgress, cancelledBy: UUID? = nil) throws -> Int64 {
        try connection.query(
            """
            UPDATE exchanges SET status = \(progress.status.rawValue), owner_completed = \(progress.ownerCompleted),
                taker_completed = \(progress.takerCompleted),
                cancelled_by = coalesce(\(cancelledBy)::uuid, cancelled_by), version = version + 1
            WHERE id = \(id)
            RETURNING version
            """
        ).first!.decode("version")
    }

    /// An exchange, to its two parties.
    func exchange(_ id: UUID, caller: Identity) throws -> Exchange? {
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

    /// Stores a review unless the reviewer wrote one of this exchange already, and counts it in the reviewee's rating;
    /// when it was stored.
    func insertReview(_ exchangeId: UUID, by reviewerId: UUID, of revieweeId: UUID, stars: Int, text: String?) throws
        -> Date?
    {
        guard
            let row = try connection.query(
                """
                INSERT INTO exchange_reviews (exchange_id, reviewer_id, reviewee_id, stars, text)
                VALUES (\(exchangeId), \(reviewerId), \(revieweeId), \(stars), \(text))
                ON CONFLICT DO NOTHING
                RETURNING created_at
                """
            ).first
        else { return nil }
        try connection.query(
            """
            INSERT INTO exchange_ratings AS r (user_id, reviews, stars) VALUES (\(revieweeId), 1, \(stars))
            ON CONFLICT (user_id) DO UPDATE SET reviews = r.reviews + 1, stars = r.stars + excluded.stars
            """)
        return try row.decode("created_at")
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

extension ListingCategory: PostgresDecodable {
    public init?(postgresText: String) { self.init(rawValue: postgresText) }
}

extension ListingStatus: PostgresDecodable {
    public init?(postgresText: String) { self.init(rawValue: postgresText) }
}

extension ExchangeStatus: PostgresDecodable {
    public init?(postgresText: String) { self.init(rawValue: postgresText) }
}
