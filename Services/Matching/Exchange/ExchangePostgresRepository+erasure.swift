import Contracts
import Foundation
import Postgres

/// What erasing a student who deleted their account reads and writes of the exchange flow's rows and events.
extension ExchangePostgresRepository {
    /// What a listing of a student who deleted their account offers from then on (the column takes 1 to 200
    /// characters).
    static let erasedOffer = "A listing of a deleted account"

    /// The campuses and ids of a student's active listings, to withdraw.
    func activeListings(ownerId: UUID) throws -> [(id: UUID, campus: String)] {
        try connection.query(
            "SELECT id, campus FROM exchange_listings WHERE owner_id = \(ownerId) AND status = 'active' ORDER BY id"
        ).map { (try $0.decode("id"), try $0.decode("campus")) }
    }

    /// Rewrites what the flow keeps of a student who deleted their account, in its rows and in the outbox events that
    /// `erase_person` cannot read: their listings keep no name, text, words or photo of theirs; the exchanges they took
    /// keep no name nor what they brought; the reviews they wrote keep their stars without their text; the reviews
    /// of them and their rating go. A second run changes nothing.
    func erase(_ userId: UUID) throws {
        let (erased, offer) = (ErasedPerson.name, Self.erasedOffer)
        let words: [String] = try connection.query(
            """
            SELECT DISTINCT unnest(search_words) AS word FROM exchange_listings WHERE owner_id = \(userId) ORDER BY word
            """
        ).map { try $0.decode("word") }
        try connection.query(
            """
            UPDATE exchange_listings SET owner_name = \(erased), offered = \(offer), wanted = '{}', note = NULL,
                photo_id = NULL, search_words = '{}'
            WHERE owner_id = \(userId)
                AND (owner_name <> \(erased) OR offered <> \(offer) OR cardinality(wanted) > 0 OR note IS NOT NULL
                    OR photo_id IS NOT NULL OR cardinality(search_words) > 0)
            """)
        // NB: a word is forgotten when no listing holds it any more; one that a listing being written holds at this
        // moment may go with it, and then that listing is found by its other words until it is edited.
        try connection.query(
            """
            DELETE FROM exchange_words
            WHERE word = ANY(\(words)::text[])
                AND word NOT IN (SELECT unnest(search_words) FROM exchange_listings WHERE search_words && \(words)::text[])
            """)
        try connection.query(
            """
            UPDATE exchanges SET taker_name = \(erased), offering = NULL
            WHERE taker_id = \(userId) AND (taker_name <> \(erased) OR offering IS NOT NULL)
            """)
        try connection.query(
            "UPDATE exchange_reviews SET text = NULL WHERE reviewer_id = \(userId) AND text IS NOT NULL")
        try connection.query("DELETE FROM exchange_reviews WHERE reviewee_id = \(userId)")
        try connection.query("DELETE FROM exchange_ratings WHERE user_id = \(userId)")
        try connection.query(
            """
            UPDATE outbox SET payload = payload || jsonb_build_object('offered', \(offer)::text)
            WHERE type IN (\(ExchangeAgreed.type), \(QuestionAsked.type))
                AND (payload ->> 'listingId')::uuid IN (SELECT id FROM exchange_listings WHERE owner_id = \(userId))
            """)
        try connection.query(
            """
            UPDATE outbox SET payload = payload || jsonb_build_object('offering', NULL)
            WHERE type = \(ExchangeAgreed.type) AND (payload ->> 'takerId')::uuid = \(userId)
            """)
    }
}
