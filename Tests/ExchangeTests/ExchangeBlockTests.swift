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

/// A block, either way round: neither lists, reads nor agrees to the other's listings, and an exchange in progress
/// between them is called off.
@Suite struct ExchangeBlockTests {
    /// An owner of snacks, a student who would take them, and a student who sees both.
    struct Cast {
        let olli = Identity.student("Olli")
        let taru = Identity.student("Taru")
        let ville = Identity.student("Ville")
    }

    static let kaisa = GeoPoint(lat: 60.17008, lon: 24.94891)

    func withCast(_ body: (MatchingTestApp, ExchangeSteps, Cast) async throws -> Void) async throws {
        let app = try await MatchingTestApp.make()
        try await body(app, try app.steps, Cast())
    }

    func list(_ offered: String, by caller: Identity, steps: ExchangeSteps) async throws -> Listing {
        try await steps.createListing(
            id: nil,
            ListingDraft(
                offered: offered, wanted: ["Kahvi"], category: .sweet, place: .point(Self.kaisa), photoId: nil,
                note: nil),
            caller: caller)
    }

    /// The ids a browse by `caller` finds, newest first, near Kaisa-talo, and searching `text`.
    private func found(_ steps: ExchangeSteps, _ caller: Identity, text: String) async throws -> [Set<UUID>] {
        var pages: [Set<UUID>] = []
        for query in [ListingQuery(), ListingQuery(near: Self.kaisa), ListingQuery(text: text)] {
            pages.append(Set(try await steps.browse(query, caller: caller).listings.map(\.id)))
        }
        return pages
    }

    @Test func aBlockHidesEachOnesListingsFromTheOtherAndAgreeingIs404UntilLifted() async throws {
        try await withCast { app, steps, cast in
            let sininen = try await list("Fazer Sininen", by: cast.olli, steps: steps)
            let pulla = try await list("Pulla", by: cast.taru, steps: steps)
            #expect(try await found(steps, cast.taru, text: "fazer").allSatisfy { $0.contains(sininen.id) })

            // Olli blocks Taru.
            try await app.applyAsConsumer(
                UserBlocked(blockerId: cast.olli.userId, blockedId: cast.taru.userId, campus: "helsinki.fi"))

            #expect(try await found(steps, cast.taru, text: "fazer") == [[pulla.id], [pulla.id], []])
            #expect(try await found(steps, cast.olli, text: "pulla") == [[sininen.id], [sininen.id], []])
            #expect(
                try await found(steps, cast.ville, text: "fazer") == [
                    [sininen.id, pulla.id], [sininen.id, pulla.id], [sininen.id],
                ])
            #expect(try await steps.listing(sininen.id, caller: cast.taru) == nil)
            #expect(try await steps.listing(pulla.id, caller: cast.olli) == nil)
            #expect(try await steps.listing(pulla.id, caller: cast.taru)?.id == pulla.id)
            await #expect(throws: MatchingError.notFound("listing")) {
                try await steps.agree(to: sininen.id, offering: nil, caller: cast.taru)
            }
            await #expect(throws: MatchingError.notFound("listing")) {
                try await steps.agree(to: pulla.id, offering: nil, caller: cast.olli)
            }

            // Lifted, the block leaves them seeing each other again.
            try await app.applyAsConsumer(UserUnblocked(blockerId: cast.olli.userId, blockedId: cast.taru.userId))
            #expect(
                try await found(steps, cast.taru, text: "fazer") == [
                    [sininen.id, pulla.id], [sininen.id, pulla.id], [sininen.id],
                ])
            #expect(try await steps.listing(sininen.id, caller: cast.taru)?.id == sininen.id)
            #expect(try await steps.agree(to: sininen.id, offering: nil, caller: cast.taru).status == .inProgress)
        }
    }

    @Test func aBlockCallsOffTheExchangeInProgressWithReasonBlockedAndKeepsFinishedOnesAndTheirReviews() async throws {
        try await withCast { app, steps, cast in
            let pulla = try await list("Pulla", by: cast.olli, steps: steps)
            let done = try await steps.agree(to: pulla.id, offering: nil, caller: cast.taru)
            _ = try await steps.complete(done.id, caller: cast.olli)
            _ = try await steps.complete(done.id, caller: cast.taru)
            _ = try await steps.review(done.id, stars: 5, text: "Still warm", caller: cast.taru)
            let sininen = try await list("Fazer Sininen", by: cast.olli, steps: steps)
            let open = try await steps.agree(to: sininen.id, offering: "Kahvi", caller: cast.taru)
            let before = try await app.events().count

            // The taker blocks the owner.
            try await app.applyAsConsumer(
                UserBlocked(blockerId: cast.taru.userId, blockedId: cast.olli.userId, campus: "helsinki.fi"))

            #expect(try await steps.exchange(open.id, caller: cast.olli)?.status == .cancelled)
            #expect(try await steps.listing(sininen.id, caller: cast.olli)?.status == .active)
            #expect(try await steps.listing(sininen.id, caller: cast.ville)?.status == .active)
            let finished = try #require(try await steps.exchange(done.id, caller: cast.olli))
            #expect(finished.status == .exchanged && finished.taker.reviewed)
            #expect(try await steps.listing(pulla.id, caller: cast.olli)?.owner.reviews == 1)
            let after = try await app.events().dropFirst(before)
            #expect(after.map(\.type) == [ExchangeCancelled.type, MatchClosed.type])
            let closed = try #require(after.first { $0.type == MatchClosed.type })
            #expect(closed.payload["reason"] as? String == "blocked")
            #expect((closed.payload["matchId"] as? String)?.lowercased() == open.id.uuidString.lowercased())
        }
    }
}
