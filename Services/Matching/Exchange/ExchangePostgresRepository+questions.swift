import Foundation
import MatchingCore
import Postgres
import ServiceKit

/// The rows of questions about listings.
extension ExchangePostgresRepository {
    static let questionColumns: SQL = "id, listing_id, asker_id, owner_id, campus, status, created_at"

    /// The asker's open question about a listing, locked.
    func lockOpenQuestion(listingId: UUID, askerId: UUID) throws -> ListingQuestion? {
        try connection.query(
            """
            SELECT \(Self.questionColumns) FROM exchange_questions
            WHERE listing_id = \(listingId) AND asker_id = \(askerId) AND status = 'open' FOR UPDATE
            """
        ).first.map(ListingQuestion.init(row:))
    }

    func insertQuestion(_ id: UUID, listingId: UUID, ownerId: UUID, caller: Identity) throws -> ListingQuestion {
        try ListingQuestion(
            row: try connection.query(
                """
                INSERT INTO exchange_questions (id, listing_id, campus, asker_id, owner_id, status)
                VALUES (\(id), \(listingId), \(caller.campus), \(caller.userId), \(ownerId), 'open')
                RETURNING \(Self.questionColumns)
                """
            ).first!)
    }

    /// Sets the open questions chosen by `condition` to `status`, and answers them.
    func endQuestions(where condition: SQL, status: QuestionStatus) throws -> [ListingQuestion] {
        try connection.query(
            """
            UPDATE exchange_questions SET status = \(status.rawValue) WHERE status = 'open' AND (\(condition))
            RETURNING \(Self.questionColumns)
            """
        ).map(ListingQuestion.init(row:))
    }

    /// The questions about a listing the caller may read: all of them for its owner, their own for anyone else;
    /// newest first.
    func questions(listingId: UUID, caller: Identity) throws -> [ListingQuestion] {
        try connection.query(
            """
            SELECT \(Self.questionColumns) FROM exchange_questions
            WHERE listing_id = \(listingId) AND campus = \(caller.campus)
                AND \(caller.userId)::uuid IN (owner_id, asker_id)
            ORDER BY created_at DESC, id LIMIT 100
            """
        ).map(ListingQuestion.init(row:))
    }

    /// The students with a question open with `userId`, either side.
    func questionPartners(of userId: UUID) throws -> [UUID] {
        try connection.query(
            """
            SELECT DISTINCT CASE WHEN owner_id = \(userId) THEN asker_id ELSE owner_id END AS partner
            FROM exchange_questions WHERE status = 'open' AND \(userId)::uuid IN (owner_id, asker_id)
            """
        ).map { try $0.decode("partner") }
    }
}

extension ListingQuestion {
    init(row: PostgresRow) throws {
        self.init(
            id: try row.decode("id"), listingId: try row.decode("listing_id"), askerId: try row.decode("asker_id"),
            ownerId: try row.decode("owner_id"), campus: try row.decode("campus"), status: try row.decode("status"),
            createdAt: try row.decode("created_at"))
    }
}

extension QuestionStatus: PostgresDecodable {
    public init?(postgresText: String) { self.init(rawValue: postgresText) }
}
