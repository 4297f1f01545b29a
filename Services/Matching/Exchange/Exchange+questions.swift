import Contracts
import Foundation
import MatchingCore
import Messaging
import Postgres
import ServiceKit

/// Where a question about a listing is: open (its conversation too), become the asker's exchange, or closed.
public enum QuestionStatus: String, Codable, Sendable, CaseIterable {
    case open, agreed, closed
}

/// A student's question about a listing: its id is its conversation's (`/v1/conversations/{id}`).
public struct ListingQuestion: Codable, Sendable, Equatable {
    public var id: UUID
    public var listingId: UUID
    public var askerId: UUID
    public var ownerId: UUID
    public var campus: String
    public var status: QuestionStatus
    public var createdAt: Date
}

/// Asking about a listing before agreeing to it (Snack Exchange: "chat with other users to make offers").
extension ExchangeSteps {
    /// The caller asks the owner of an active listing of their campus about it: a conversation between them about it
    /// opens, or the one open already is answered (`isNew` false). 404 for a withdrawn listing, another campus's or
    /// one of someone in a block with them; 409 for their own and one agreed to already.
    public func ask(about listingId: UUID, caller: Identity) async throws -> (question: ListingQuestion, isNew: Bool) {
        try await transaction { rows in
            let listing = try Self.lockListingWithItsPair(listingId, caller: caller, rows: rows)
            guard listing.status != .withdrawn else { throw MatchingError.notFound("listing") }
            if let open = try rows.lockOpenQuestion(listingId: listingId, askerId: caller.userId) {
                return (open, false)
            }
            try ExchangeRules.question(about: listing.status, ownerId: listing.ownerId, caller: caller.userId)
            let question = try rows.insertQuestion(
                UUID(), listingId: listingId, ownerId: listing.ownerId, caller: caller)
            let offered = listing.draft.offered
            try Outbox.append(
                QuestionAsked(
                    questionId: question.id, listingId: listingId, offered: offered, ownerId: listing.ownerId,
                    askerId: caller.userId, askerName: caller.name),
                on: rows.connection)
            try FlowMatch(
                id: question.id, flow: ExchangeFlow.name, campus: caller.campus,
                members: [
                    MatchMember(
                        userId: listing.ownerId, name: try rows.userName(listing.ownerId) ?? listing.ownerName,
                        role: ExchangeSide.owner.rawValue),
                    MatchMember(userId: caller.userId, name: caller.name, role: "asker"),
                ],
                subject: "Question about \(offered)"
            ).announceOpened(on: rows.connection)
            return (question, true)
        }
    }

    /// The questions about a listing the caller may read: every one for its owner, their own for anyone else.
    public func questions(about listingId: UUID, caller: Identity) async throws -> [ListingQuestion] {
        try await database.withConnection { connection in
            try ExchangePostgresRepository(connection: connection).questions(listingId: listingId, caller: caller)
        }
    }

    /// Ends the open questions `condition` chooses (`endQuestions`), closing their conversations with `ending`.
    static func closeQuestions(where condition: SQL, ending: FlowMatch.Ending, rows: ExchangePostgresRepository) throws
    {
        for question in try rows.endQuestions(where: condition, status: .closed) {
            try question.match.announceClosed(ending, version: 2, on: rows.connection)
        }
    }
}

extension ListingQuestion {
    /// The question as the match its conversation belongs to; closing needs only the members' ids.
    var match: FlowMatch {
        FlowMatch(
            id: id, flow: ExchangeFlow.name, campus: campus,
            members: [
                MatchMember(userId: ownerId, name: "", role: ExchangeSide.owner.rawValue),
                MatchMember(userId: askerId, name: "", role: "asker"),
            ],
            subject: "")
    }
}

extension ExchangeRules {
    /// Who may ask about a listing: anyone but its owner, while it is active.
    static func question(about status: ListingStatus, ownerId: UUID, caller: UUID) throws(MatchingError) {
        guard ownerId != caller else { throw .conflict("You cannot ask about your own listing.") }
        guard status == .active else { throw .conflict("The listing is \(status.rawValue): it cannot be asked about.") }
    }
}
