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

/// A student who deleted their account leaves the exchange flow: their listings are withdrawn, their exchange in
/// progress is called off, and what others keep of them (a finished exchange, a review) names no one.
@Suite struct ExchangeErasureTests {
    static let kaisa = GeoPoint(lat: 60.17008, lon: 24.94891)

    func list(
        _ offered: String, wanted: [String] = ["Kahvi"], note: String? = nil, photoId: UUID? = nil, by caller: Identity,
        steps: ExchangeSteps
    ) async throws -> Listing {
        try await steps.createListing(
            id: nil,
            ListingDraft(
                offered: offered, wanted: wanted, category: .sweet, place: .point(Self.kaisa), photoId: photoId,
                note: note),
            caller: caller)
    }

    @Test func aDeletedAccountWithdrawsListingsCallsOffTheExchangeAndLeavesNoTraceOfThePerson() async throws {
        let app = try await MatchingTestApp.make()
        let steps = try app.steps
        let (pirkko, olli) = (Identity.student("Pirkko Poistuva"), Identity.student("Olli Odottaja"))
        let bio = "Rakastan ruisleipää"
        try await app.register(pirkko, bio: bio)
        try await app.register(olli)
        let photo = UUID()
        try await app.applyAsConsumer(
            MediaStored(
                mediaId: photo, ownerId: pirkko.userId, campus: pirkko.campus, contentType: "image/jpeg", width: 1,
                height: 1))
        // A finished exchange of Pirkko's buns with Olli, reviewed both ways.
        let buns = try await list(
            "Pirkon pullat", wanted: ["Pirkon toive"], note: "Soita Pirkolle", photoId: photo, by: pirkko,
            steps: steps)
        let finished = try await steps.agree(to: buns.id, offering: "Ollin kahvi", caller: olli)
        _ = try await steps.complete(finished.id, caller: olli)
        _ = try await steps.complete(finished.id, caller: pirkko)
        _ = try await steps.review(finished.id, stars: 5, text: "Pirkon kiitos Ollille", caller: pirkko)
        _ = try await steps.review(finished.id, stars: 4, text: "Pirkko oli ihana", caller: olli)
        // Pirkko takes Olli's cookies, and lists liquorice.
        let cookies = try await list("Ollin keksit", by: olli, steps: steps)
        let open = try await steps.agree(to: cookies.id, offering: "Pirkon mehu", caller: pirkko)
        let liquorice = try await list("Pirkon salmiakki", by: pirkko, steps: steps)

        let deleted = UserDeleted(userId: pirkko.userId, campus: pirkko.campus)
        try await app.applyAsConsumer(deleted)

        #expect(try await steps.exchange(open.id, caller: olli)?.status == .cancelled)
        let closings = try await app.events().filter {
            $0.type == MatchClosed.type
                && ($0.payload["matchId"] as? String)?.lowercased() == open.id.uuidString.lowercased()
        }
        #expect(closings.map { $0.payload["reason"] as? String } == ["blocked"])
        #expect(try await steps.listing(cookies.id, caller: olli)?.status == .active)
        #expect(try await steps.listing(liquorice.id, caller: olli) == nil)
        for query in [ListingQuery(), ListingQuery(near: Self.kaisa)] {
            #expect(try await steps.browse(query, caller: olli).listings.map(\.id) == [cookies.id])
        }
        #expect(try await steps.browse(ListingQuery(text: "salmiakki"), caller: olli).listings.isEmpty)
        let kept = try #require(try await steps.exchange(finished.id, caller: olli))
        #expect(kept.status == .exchanged && kept.owner.name == ErasedPerson.name)
        let reviews = try await app.database.pool.query(
            "SELECT reviewer_id, stars, text FROM exchange_reviews ORDER BY stars"
        ).map { (try $0.decode("reviewer_id", as: UUID.self), try $0.decode("stars", as: Int.self)) }
        #expect(reviews.map(\.0) == [pirkko.userId] && reviews.map(\.1) == [5])
        let traces = try await app.traces(
            of: [
                pirkko.name, bio, "Pirkon pullat", "Pirkon toive", "Soita Pirkolle", "Pirkon mehu", "Pirkon salmiakki",
                "Pirkon kiitos", "Pirkko oli ihana", photo.uuidString.lowercased(),
            ])
        #expect(traces.keys.sorted() == [photo.uuidString.lowercased()])
        #expect(traces[photo.uuidString.lowercased()]?.map { $0.prefix { $0 != ":" } } == ["media"])
        #expect(try await app.traces(of: [olli.name, "Ollin keksit"]).count == 2)

        await #expect(throws: MatchingError.forbidden("Your account is suspended or deleted.")) {
            _ = try await list("Pulla", by: pirkko, steps: steps)
        }
        let before = try await app.snapshot()
        try await app.applyAsConsumer(deleted)
        #expect(try await app.snapshot() == before)
    }
}
