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

/// A block, either way round: the two leave each other's feeds, cannot swipe on each other, and their match closes.
@Suite struct TutoringBlockTests {
    /// A student and two tutors of MAT-101, each with a profile.
    struct Cast {
        let saara = Identity.student("Saara")
        let matti = Identity.student("Matti")
        let fiia = Identity.student("Fiia")
    }

    func withCast(_ body: (MatchingTestApp, TutoringSteps, Cast) async throws -> Void) async throws {
        let app = try await MatchingTestApp.make()
        let steps = TutoringSteps(database: app.database.pool)
        let cast = Cast()
        for (caller, role) in [(cast.saara, TutoringRole.student), (cast.matti, .tutor), (cast.fiia, .tutor)] {
            _ = try await steps.saveProfile(
                .init(
                    role: role, courses: ["MAT-101"], description: "", rateCents: 0, availability: "", preferences: ""),
                caller: caller)
        }
        try await body(app, steps, cast)
    }

    private func cardIds(_ steps: TutoringSteps, _ caller: Identity) async throws -> Set<UUID> {
        Set(try await steps.feed(caller: caller, course: nil, after: nil, limit: 20).cards.map(\.userId))
    }

    @Test func aBlockHidesEachFromTheOthersFeedAndSwipesOnThemAre404UntilLifted() async throws {
        try await withCast { app, steps, cast in
            #expect(try await cardIds(steps, cast.saara) == [cast.matti.userId, cast.fiia.userId])

            // Matti blocks Saara.
            try await app.applyAsConsumer(
                UserBlocked(blockerId: cast.matti.userId, blockedId: cast.saara.userId, campus: "helsinki.fi"))

            #expect(try await cardIds(steps, cast.saara) == [cast.fiia.userId])
            #expect(try await cardIds(steps, cast.matti).isEmpty)
            #expect(try await cardIds(steps, cast.fiia) == [cast.saara.userId])
            await #expect(throws: MatchingError.notFound("card")) {
                try await steps.swipe(caller: cast.saara, target: cast.matti.userId, likes: true)
            }
            await #expect(throws: MatchingError.notFound("card")) {
                try await steps.swipe(caller: cast.matti, target: cast.saara.userId, likes: false)
            }

            // Lifted, the block leaves them seeing each other again: the refused swipes recorded nothing.
            try await app.applyAsConsumer(UserUnblocked(blockerId: cast.matti.userId, blockedId: cast.saara.userId))
            #expect(try await cardIds(steps, cast.saara) == [cast.matti.userId, cast.fiia.userId])
            #expect(try await cardIds(steps, cast.matti) == [cast.saara.userId])
        }
    }

    @Test func aLikeGivenBeforeTheBlockMakesNoMatchAfterIt() async throws {
        try await withCast { app, steps, cast in
            _ = try await steps.swipe(caller: cast.matti, target: cast.saara.userId, likes: true)
            try await app.applyAsConsumer(
                UserBlocked(blockerId: cast.saara.userId, blockedId: cast.matti.userId, campus: "helsinki.fi"))

            await #expect(throws: MatchingError.notFound("card")) {
                try await steps.swipe(caller: cast.saara, target: cast.matti.userId, likes: true)
            }
            #expect(try await steps.matches(of: cast.saara).isEmpty)
            #expect(try await app.events().filter { $0.type == MatchOpened.type }.isEmpty)
        }
    }

    @Test func aBlockClosesTheActiveMatchWithReasonBlockedAndHidesTheFullProfile() async throws {
        try await withCast { app, steps, cast in
            _ = try await steps.swipe(caller: cast.saara, target: cast.fiia.userId, likes: true)
            let matched = try await steps.swipe(caller: cast.fiia, target: cast.saara.userId, likes: true)
            let matchId = try #require(matched.matchId)
            #expect(try await steps.profile(cast.fiia.userId, visibleTo: cast.saara) != nil)
            let opened = try await app.events().count

            // The student blocks the tutor.
            try await app.applyAsConsumer(
                UserBlocked(blockerId: cast.saara.userId, blockedId: cast.fiia.userId, campus: "helsinki.fi"))

            #expect(try await steps.matches(of: cast.saara).isEmpty)
            #expect(try await steps.matches(of: cast.fiia).isEmpty)
            #expect(try await steps.profile(cast.fiia.userId, visibleTo: cast.saara) == nil)
            #expect(try await steps.profile(cast.saara.userId, visibleTo: cast.fiia) == nil)
            await #expect(throws: MatchingError.notFound("match")) {
                try await steps.unmatch(matchId, caller: cast.fiia)
            }
            let after = try await app.events().dropFirst(opened)
            #expect(after.map(\.type) == [TutoringUnmatched.type, MatchClosed.type])
            let closed = try #require(after.first { $0.type == MatchClosed.type })
            #expect(closed.payload["reason"] as? String == "blocked")
            #expect((closed.payload["matchId"] as? String)?.lowercased() == matchId.uuidString.lowercased())

            // A second delivery of the event closes nothing more.
            try await app.applyAsConsumer(
                UserBlocked(blockerId: cast.saara.userId, blockedId: cast.fiia.userId, campus: "helsinki.fi"))
            #expect(try await app.events().count == opened + 2)
        }
    }
}
