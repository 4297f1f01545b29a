import Contracts
import Foundation
import MatchingCore
import MatchingTestSupport
import Messaging
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import Exchange

/// Asking about a listing before agreeing: one conversation per asker and listing, closed when the listing goes to
/// someone else, is withdrawn or a block falls between them; the asker's agreement goes on in it.
@Suite struct ExchangeQuestionTests {
    struct Cast {
        let olli = Identity.student("Olli")
        let taru = Identity.student("Taru")
        let ville = Identity.student("Ville")
    }

    func withCast(_ body: (MatchingTestApp, ExchangeSteps, Cast, Listing) async throws -> Void) async throws {
        let app = try await MatchingTestApp.make()
        let steps = try app.steps
        let cast = Cast()
        let pocky = try await steps.createListing(
            id: nil,
            ListingDraft(
                offered: "Pocky", wanted: ["Mints"], category: .sweet,
                place: .point(GeoPoint(lat: 60.17008, lon: 24.94891)), photoId: nil, note: nil),
            caller: cast.olli)
        try await body(app, steps, cast, pocky)
    }

    /// The `match.closed` events of the outbox after the first `from`, by match id: their reasons.
    func closings(_ app: MatchingTestApp, from: Int = 0) async throws -> [String: String] {
        var reasons: [String: String] = [:]
        for event in try await app.events().dropFirst(from) where event.type == MatchClosed.type {
            reasons[(event.payload["matchId"] as? String ?? "").lowercased()] = event.payload["reason"] as? String
        }
        return reasons
    }

    @Test func oneConversationPerAskerAndListingThatTheOwnerIsToldOfAndAStrangerCannotRead() async throws {
        try await withCast { app, steps, cast, pocky in
            let (question, isNew) = try await steps.ask(about: pocky.id, caller: cast.taru)
            #expect(isNew && question.status == .open && question.ownerId == cast.olli.userId)
            let (again, isNewAgain) = try await steps.ask(about: pocky.id, caller: cast.taru)
            #expect(!isNewAgain && again.id == question.id)
            let (villes, _) = try await steps.ask(about: pocky.id, caller: cast.ville)
            #expect(villes.id != question.id)

            let events = try await app.events()
            let asked = events.filter { $0.type == QuestionAsked.type }
            #expect(asked.count == 2)
            #expect(asked.first?.payload["recipients"] as? [String] == [cast.olli.userId.uuidString])
            #expect(
                (asked.first?.payload["notice"] as? [String: Any])?["title"] as? String == "Taru asks about your Pocky")
            let opened = events.filter { $0.type == MatchOpened.type }
            #expect(
                opened.map { ($0.payload["matchId"] as? String)?.lowercased() } == [
                    question.id.uuidString.lowercased(), villes.id.uuidString.lowercased(),
                ])
            #expect(opened.first?.payload["subject"] as? String == "Question about Pocky")

            try await app.test { client in
                let stranger = try await app.token(for: .student("Sami"))
                let owner = try await app.token(for: cast.olli)
                let taru = try await app.token(for: cast.taru)
                let path = "/v1/listings/\(pocky.id)/questions"
                let (repeated, body) = try await client.call(.post, path, token: taru)
                #expect(repeated == .ok && (body["id"] as? String)?.lowercased() == question.id.uuidString.lowercased())
                let count = { (token: String) in
                    let (status, list) = try await client.call(.get, path, token: token)
                    #expect(status == .ok)
                    return (list["questions"] as? [Any])?.count ?? -1
                }
                #expect(try await count(owner) == 2)
                #expect(try await count(taru) == 1)
                #expect(try await count(stranger) == 0)
                let (own, _) = try await client.call(.post, path, token: owner)
                #expect(own == .conflict)
                let (unknown, _) = try await client.call(.post, "/v1/listings/\(UUID())/questions", token: taru)
                #expect(unknown == .notFound)
                let (elsewhere, _) = try await client.call(
                    .post, path, token: try await app.token(for: .student("Oona", campus: "aalto.fi")))
                #expect(elsewhere == .notFound)
                let (badId, _) = try await client.call(.post, "/v1/listings/nonsense/questions", token: taru)
                #expect(badId == .notFound)
            }
            let stored: Int = try await app.database.pool.query("SELECT count(*) AS n FROM exchange_questions")
                .first!.decode("n")
            #expect(stored == 2)
        }
    }

    @Test func theAskersAgreementGoesOnInTheirConversationAndTheOthersClose() async throws {
        try await withCast { app, steps, cast, pocky in
            let (taru, _) = try await steps.ask(about: pocky.id, caller: cast.taru)
            let (ville, _) = try await steps.ask(about: pocky.id, caller: cast.ville)
            let before = try await app.events().count

            let exchange = try await steps.agree(to: pocky.id, offering: "Two mints", caller: cast.taru)

            #expect(exchange.id == taru.id)
            let after = try await app.events().dropFirst(before)
            let opened = after.filter { $0.type == MatchOpened.type }
            #expect(
                opened.map { ($0.payload["matchId"] as? String)?.lowercased() } == [taru.id.uuidString.lowercased()])
            #expect(try await closings(app, from: before) == [ville.id.uuidString.lowercased(): "superseded"])
            let statuses = try await steps.questions(about: pocky.id, caller: cast.olli).map { ($0.id, $0.status) }
            #expect(Dictionary(uniqueKeysWithValues: statuses) == [taru.id: .agreed, ville.id: .closed])
            // Agreed to, the listing cannot be asked about; cancelled, it can, in a new conversation.
            await #expect(throws: MatchingError.conflict("The listing is in_progress: it cannot be asked about.")) {
                try await steps.ask(about: pocky.id, caller: cast.ville)
            }
            _ = try await steps.cancel(exchange.id, caller: cast.olli)
            let (again, isNew) = try await steps.ask(about: pocky.id, caller: cast.taru)
            #expect(isNew && again.id != taru.id)
        }
    }

    @Test func withdrawingTheListingOrABlockClosesTheQuestions() async throws {
        try await withCast { app, steps, cast, pocky in
            let (taru, _) = try await steps.ask(about: pocky.id, caller: cast.taru)
            let (ville, _) = try await steps.ask(about: pocky.id, caller: cast.ville)

            // Olli blocks Taru: her question closes, and she can ask nothing more.
            try await app.applyAsConsumer(
                UserBlocked(blockerId: cast.olli.userId, blockedId: cast.taru.userId, campus: "helsinki.fi"))
            #expect(try await closings(app) == [taru.id.uuidString.lowercased(): "blocked"])
            await #expect(throws: MatchingError.notFound("listing")) {
                try await steps.ask(about: pocky.id, caller: cast.taru)
            }

            let before = try await app.events().count
            _ = try await steps.withdrawListing(pocky.id, caller: cast.olli)
            #expect(try await closings(app, from: before) == [ville.id.uuidString.lowercased(): "withdrawn"])
            await #expect(throws: MatchingError.notFound("listing")) {
                try await steps.ask(about: pocky.id, caller: cast.ville)
            }
            let open: Int = try await app.database.pool.query(
                "SELECT count(*) AS n FROM exchange_questions WHERE status = 'open'"
            ).first!.decode("n")
            #expect(open == 0)
        }
    }
}
