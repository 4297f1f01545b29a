import Contracts
import Foundation
import MatchingCore
import MatchingTestSupport
import Messaging
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import Tutoring

/// A student who deleted their account leaves the tutoring flow: their profile and swipes go, their match closes,
/// and what others keep of them names no one.
@Suite struct TutoringErasureTests {
    @Test func aDeletedAccountClosesTheMatchAndLeavesNoTraceOfThePerson() async throws {
        let app = try await MatchingTestApp.make()
        let steps = TutoringSteps(database: app.database.pool)
        let pirkko = Identity.student("Pirkko Poistuva")
        let (matti, fiia, toni) = (
            Identity.student("Matti Opettaja"), Identity.student("Fiia"), Identity.student("Toni")
        )
        let (bio, description) = ("Rakastan ruisleipää", "Etsin kärsivällistä opettajaa Pirkolle")
        try await app.register(pirkko, bio: bio)
        for (caller, role, text) in [
            (pirkko, TutoringRole.student, description), (matti, .tutor, "Opetan matikkaa"), (fiia, .tutor, ""),
            (toni, .tutor, ""),
        ] {
            try await app.register(caller)
            _ = try await steps.saveProfile(
                .init(
                    role: role, courses: ["MAT-101"], description: text, rateCents: 0, availability: "",
                    preferences: ""),
                caller: caller)
        }
        // An open match with Matti, a finished one with Fiia, and Toni's like that Pirkko never answered.
        _ = try await steps.swipe(caller: pirkko, target: matti.userId, likes: true)
        let open = try #require(try await steps.swipe(caller: matti, target: pirkko.userId, likes: true).matchId)
        _ = try await steps.swipe(caller: pirkko, target: fiia.userId, likes: true)
        let finished = try #require(try await steps.swipe(caller: fiia, target: pirkko.userId, likes: true).matchId)
        try await steps.unmatch(finished, caller: fiia)
        _ = try await steps.swipe(caller: toni, target: pirkko.userId, likes: true)

        let deleted = UserDeleted(userId: pirkko.userId, campus: pirkko.campus)
        try await app.applyAsConsumer(deleted)

        #expect(try await steps.matches(of: matti).isEmpty)
        let closings = try await app.events().filter {
            $0.type == MatchClosed.type
                && ($0.payload["matchId"] as? String)?.lowercased() == open.uuidString.lowercased()
        }
        #expect(closings.map { $0.payload["reason"] as? String } == ["blocked"])
        for other in [matti, fiia, toni] {
            let cards = try await steps.feed(caller: other, course: nil, after: nil, limit: 20).cards
            #expect(!cards.map(\.userId).contains(pirkko.userId))
            #expect(try await steps.profile(pirkko.userId, visibleTo: other) == nil)
        }
        let swipes = try await app.database.pool.query(
            """
            SELECT count(*) AS n FROM tutoring_swipes
            WHERE swiper_id = \(pirkko.userId) OR target_id = \(pirkko.userId)
            """
        ).first!.decode("n", as: Int64.self)
        #expect(swipes == 0)
        #expect(try await app.traces(of: [pirkko.name, bio, description]).isEmpty)
        #expect(try await app.traces(of: [matti.name, "Opetan matikkaa"]).count == 2)

        await #expect(throws: MatchingError.forbidden("Your account is suspended or deleted.")) {
            _ = try await steps.saveProfile(
                .init(
                    role: .student, courses: ["MAT-101"], description: "", rateCents: 0, availability: "",
                    preferences: ""),
                caller: pirkko)
        }
        let before = try await app.snapshot()
        try await app.applyAsConsumer(deleted)
        #expect(try await app.snapshot() == before)
    }
}
