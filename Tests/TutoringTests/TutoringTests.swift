import Contracts
import Foundation
import HummingbirdTesting
import MatchingTestSupport
import ServiceKit
import TestSupport
import Testing

@testable import MatchingCore
@testable import Tutoring

@Suite struct TutoringRulesTests {
    @Test(arguments: [
        ("MAT-101", "MAT-101"), ("mat101", "MAT-101"), ("MAT 101", "MAT-101"), ("mat_101", "MAT-101"),
        ("chem-201b", "CHEM-201B"), ("CS50", "CS-50"), ("2024X", "2024X"),
    ])
    func courseCodesHaveOneSpelling(raw: String, normalized: String) {
        #expect(TutoringRules.normalizedCourse(raw) == normalized)
    }

    @Test(arguments: ["", "M", "MAT 101 !", "ÄÖ-101", String(repeating: "A", count: 17)])
    func whatIsNotACourseCodeIsRefused(raw: String) {
        #expect(TutoringRules.normalizedCourse(raw) == nil)
    }

    @Test func aFeedCursorReadsBackWhatItWrote() throws {
        let cursor = FeedCursor(shared: 2, activeAtMicroseconds: 1_790_000_000_123_456, userId: UUID())
        #expect(try FeedCursor(cursor.text) == cursor)
        #expect(throws: Problem.self) { try FeedCursor("2.x.y") }
    }
}

/// The tutoring flow on real PostgreSQL through the matching application's routes.
@Suite struct TutoringTests {
    /// A student of MAT-101 and PHYS-102, tutors of MAT-101 (one also of PHYS-102), a chemist, and a tutor of
    /// MAT-101 on another campus, each with a profile.
    struct Cast {
        let student = Identity.student("Saara")
        let mathTutor = Identity.student("Matti")
        let physicsTutor = Identity.student("Fiia")
        let chemist = Identity.student("Kemal")
        let elsewhere = Identity.student("Otto", campus: "aalto.fi")
    }

    func profile(_ role: String, _ courses: [String], rate: Int = 2000) -> [String: Any] {
        [
            "role": role, "courses": courses, "description": "Calculus and mechanics, patiently.", "rateCents": rate,
            "availability": "Weekday evenings", "preferences": "Kaisa-talo or online",
        ]
    }

    func withCast(
        _ body: @escaping @Sendable (MatchingTestApp, Cast, [UUID: String], any TestClientProtocol) async throws -> Void
    ) async throws {
        let app = try await MatchingTestApp.make()
        let cast = Cast()
        var tokens: [UUID: String] = [:]
        for caller in [cast.student, cast.mathTutor, cast.physicsTutor, cast.chemist, cast.elsewhere] {
            tokens[caller.userId] = try await app.token(for: caller)
        }
        let allTokens = tokens
        try await app.test { client in
            let profiles: [(Identity, [String: Any])] = [
                (cast.student, profile("student", ["MAT-101", "phys 102"])),
                (cast.mathTutor, profile("tutor", ["mat101"])),
                (cast.physicsTutor, profile("tutor", ["MAT 101", "PHYS-102"])),
                (cast.chemist, profile("tutor", ["CHEM-201"])),
                (cast.elsewhere, profile("tutor", ["MAT-101"])),
            ]
            for (caller, body) in profiles {
                let (status, answer) = try await client.call(
                    .put, "/v1/tutoring/profile", token: allTokens[caller.userId]!, body: body)
                guard status == .ok else { throw TestFailure("profile answered \(status): \(answer)") }
            }
            try await body(app, cast, allTokens, client)
        }
    }

    func cardIds(_ client: any TestClientProtocol, _ token: String, query: String = "") async throws -> [UUID] {
        let (status, feed) = try await client.call(.get, "/v1/tutoring/feed\(query)", token: token)
        guard status == .ok else { throw TestFailure("feed answered \(status): \(feed)") }
        return (feed["cards"] as? [[String: Any]] ?? []).compactMap {
            ($0["userId"] as? String).flatMap { UUID(uuidString: $0) }
        }
    }

    @Test func theFeedShowsTutorsOfSharedCoursesMostSharedFirstAndNoChemist() async throws {
        try await withCast { _, cast, tokens, client in
            let (status, feed) = try await client.call(.get, "/v1/tutoring/feed", token: tokens[cast.student.userId]!)
            let cards = feed["cards"] as? [[String: Any]] ?? []

            #expect(status == .ok)
            #expect(
                cards.compactMap { ($0["userId"] as? String).flatMap { UUID(uuidString: $0) } } == [
                    cast.physicsTutor.userId, cast.mathTutor.userId,
                ])
            #expect(cards.first?["name"] as? String == "Fiia")
            let courses = cards.first?["courses"] as? [[String: Any]] ?? []
            #expect(courses.compactMap { $0["code"] as? String } == ["MAT-101", "PHYS-102"])
            #expect(courses.compactMap { $0["shared"] as? Bool } == [true, true])
            #expect(cards.allSatisfy { $0["email"] == nil && $0["preferences"] == nil })
            #expect(
                try await cardIds(client, tokens[cast.student.userId]!, query: "?course=phys102") == [
                    cast.physicsTutor.userId
                ])
            #expect(try await cardIds(client, tokens[cast.mathTutor.userId]!) == [cast.student.userId])
            #expect(try await cardIds(client, tokens[cast.chemist.userId]!) == [])
        }
    }

    @Test func aPassedCardNeverReturnsAndASecondSwipeIs409() async throws {
        try await withCast { _, cast, tokens, client in
            let token = tokens[cast.student.userId]!
            let (passed, _) = try await client.call(
                .post, "/v1/tutoring/swipes", token: token,
                body: ["userId": cast.mathTutor.userId.uuidString, "like": false])
            let (again, problem) = try await client.call(
                .post, "/v1/tutoring/swipes", token: token,
                body: ["userId": cast.mathTutor.userId.uuidString, "like": true])

            #expect(passed == .created)
            #expect(again == .conflict && problem["detail"] as? String == "You already swiped on this user.")
            #expect(try await cardIds(client, token) == [cast.physicsTutor.userId])
        }
    }

    @Test func twoLikesMakeOneMatchThatOpensAChatAndAnUnmatchClosesIt() async throws {
        try await withCast { app, cast, tokens, client in
            let (saara, fiia) = (tokens[cast.student.userId]!, tokens[cast.physicsTutor.userId]!)
            let (_, first) = try await client.call(
                .post, "/v1/tutoring/swipes", token: saara,
                body: ["userId": cast.physicsTutor.userId.uuidString, "like": true])
            let (_, second) = try await client.call(
                .post, "/v1/tutoring/swipes", token: fiia,
                body: ["userId": cast.student.userId.uuidString, "like": true])
            let matchId = try #require((second["matchId"] as? String).flatMap { UUID(uuidString: $0) })
            let (_, matches) = try await client.call(.get, "/v1/tutoring/matches", token: saara)
            let (profileStatus, fullProfile) = try await client.call(
                .get, "/v1/tutoring/profiles/\(cast.physicsTutor.userId)", token: saara)
            let (strangerStatus, _) = try await client.call(
                .get, "/v1/tutoring/profiles/\(cast.physicsTutor.userId)", token: tokens[cast.mathTutor.userId]!)
            let opened = try await app.events()

            #expect(first["matched"] as? Bool == false && second["matched"] as? Bool == true)
            #expect((matches["matches"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Fiia"])
            #expect(profileStatus == .ok && fullProfile["preferences"] as? String == "Kaisa-talo or online")
            #expect(strangerStatus == .notFound)
            let matched = try #require(opened.first { $0.type == TutoringMatched.type })
            #expect(
                Set((matched.payload["recipients"] as? [String] ?? []).compactMap { UUID(uuidString: $0) }) == [
                    cast.student.userId, cast.physicsTutor.userId,
                ])
            #expect(matched.payload["courses"] as? [String] == ["MAT-101", "PHYS-102"])
            let openedMatch = try #require(opened.first { $0.type == MatchOpened.type })
            #expect(openedMatch.payload["flow"] as? String == "tutoring")
            #expect(openedMatch.payload["subject"] as? String == "MAT-101, PHYS-102 tutoring")

            let (unmatched, _) = try await client.call(.delete, "/v1/tutoring/matches/\(matchId)", token: fiia)
            let (again, _) = try await client.call(.delete, "/v1/tutoring/matches/\(matchId)", token: saara)
            let (afterStatus, _) = try await client.call(
                .get, "/v1/tutoring/profiles/\(cast.physicsTutor.userId)", token: saara)
            let closed = try await app.events().dropFirst(opened.count).map(\.type)

            #expect(unmatched == .noContent && again == .notFound && afterStatus == .notFound)
            #expect(closed == [TutoringUnmatched.type, MatchClosed.type])
            #expect(try await cardIds(client, saara) == [cast.mathTutor.userId])
            #expect(try await cardIds(client, fiia).isEmpty)
        }
    }

    @Test func anotherCampusNeitherSeesNorSwipesNorUnmatchesAndIsNamedByNoEvent() async throws {
        try await withCast { app, cast, tokens, client in
            let (saara, fiia, otto) = (
                tokens[cast.student.userId]!, tokens[cast.physicsTutor.userId]!, tokens[cast.elsewhere.userId]!
            )
            _ = try await client.call(
                .post, "/v1/tutoring/swipes", token: saara,
                body: ["userId": cast.physicsTutor.userId.uuidString, "like": true])
            let (_, matched) = try await client.call(
                .post, "/v1/tutoring/swipes", token: fiia,
                body: ["userId": cast.student.userId.uuidString, "like": true])
            let matchId = try #require(matched["matchId"] as? String)

            let ottosFeed = try await cardIds(client, otto, query: "?course=MAT-101")
            let (ottoLikes, _) = try await client.call(
                .post, "/v1/tutoring/swipes", token: otto,
                body: ["userId": cast.student.userId.uuidString, "like": true])
            let (saaraLikes, _) = try await client.call(
                .post, "/v1/tutoring/swipes", token: saara,
                body: ["userId": cast.elsewhere.userId.uuidString, "like": true])
            let (profile, _) = try await client.call(
                .get, "/v1/tutoring/profiles/\(cast.student.userId)", token: otto)
            let (theirs, _) = try await client.call(
                .get, "/v1/tutoring/profiles/\(cast.elsewhere.userId)", token: saara)
            let (_, ottosMatches) = try await client.call(.get, "/v1/tutoring/matches", token: otto)
            let (unmatched, _) = try await client.call(.delete, "/v1/tutoring/matches/\(matchId)", token: otto)
            let (_, saarasMatches) = try await client.call(.get, "/v1/tutoring/matches", token: saara)

            #expect(ottosFeed.isEmpty)
            #expect(!(try await cardIds(client, saara)).contains(cast.elsewhere.userId))
            #expect(ottoLikes == .notFound && saaraLikes == .notFound)
            #expect(profile == .notFound && theirs == .notFound && unmatched == .notFound)
            #expect((ottosMatches["matches"] as? [Any])?.isEmpty == true)
            #expect((saarasMatches["matches"] as? [[String: Any]])?.count == 1)
            for event in try await app.events() {
                let text = String(decoding: try JSONSerialization.data(withJSONObject: event.payload), as: UTF8.self)
                #expect(!text.lowercased().contains(cast.elsewhere.userId.uuidString.lowercased()), "\(event.type)")
            }
        }
    }

    @Test func twentyConcurrentLikesBetweenTenPairsMakeExactlyTenMatches() async throws {
        let app = try await MatchingTestApp.make()
        let steps = TutoringSteps(database: app.database.pool)
        let students = (0..<10).map { Identity.student("Student \($0)") }
        let tutors = (0..<10).map { Identity.student("Tutor \($0)") }
        for (caller, role) in students.map({ ($0, TutoringRole.student) }) + tutors.map({ ($0, TutoringRole.tutor) }) {
            _ = try await steps.saveProfile(
                .init(
                    role: role, courses: ["MAT-101"], description: "", rateCents: 0, availability: "", preferences: ""),
                caller: caller)
        }

        let results = try await withThrowingTaskGroup(of: SwipeResult.self) { group in
            for (student, tutor) in zip(students, tutors) {
                group.addTask { try await steps.swipe(caller: student, target: tutor.userId, likes: true) }
                group.addTask { try await steps.swipe(caller: tutor, target: student.userId, likes: true) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let matches = try await app.database.pool.query("SELECT count(*)::int AS n FROM tutoring_matches")
            .first!.decode("n", as: Int.self)
        let opened = try await app.events().filter { $0.type == MatchOpened.type }.count

        #expect(results.filter(\.matched).count == 10)
        #expect(matches == 10 && opened == 10)
    }

    @Test func badInputIsAProblemNamingItsField() async throws {
        let app = try await MatchingTestApp.make()
        let caller = Identity.student("Aino")
        let token = try await app.token(for: caller)

        try await app.test { client in
            let (noProfile, problem) = try await client.call(.get, "/v1/tutoring/feed", token: token)
            #expect(
                noProfile == .conflict && (problem["detail"] as? String)?.contains("PUT /v1/tutoring/profile") == true)
            let cases: [([String: Any], String)] = [
                (["role": "teacher", "courses": ["MAT-101"]], "role"),
                (["role": "tutor", "courses": []], "courses"),
                (["role": "tutor", "courses": ["MAT 101 !"]], "courses"),
                (["role": "tutor", "courses": ["MAT-101"], "rateCents": -1], "rateCents"),
                (
                    ["role": "tutor", "courses": ["MAT-101"], "description": String(repeating: "x", count: 1001)],
                    "description"
                ),
            ]
            for (body, field) in cases {
                let (status, problem) = try await client.call(.put, "/v1/tutoring/profile", token: token, body: body)
                #expect(status == .badRequest && problem["field"] as? String == field, "\(body)")
            }
            _ = try await client.call(
                .put, "/v1/tutoring/profile", token: token, body: ["role": "tutor", "courses": ["MAT-101"]])
            let (own, _) = try await client.call(
                .post, "/v1/tutoring/swipes", token: token, body: ["userId": caller.userId.uuidString, "like": true])
            let (unknown, _) = try await client.call(
                .post, "/v1/tutoring/swipes", token: token, body: ["userId": UUID().uuidString, "like": true])
            let (badCourse, _) = try await client.call(.get, "/v1/tutoring/feed?course=%21%21", token: token)
            let (badCursor, _) = try await client.call(.get, "/v1/tutoring/feed?after=nonsense", token: token)
            #expect(own == .badRequest && unknown == .notFound && badCourse == .badRequest && badCursor == .badRequest)
        }
    }
}
