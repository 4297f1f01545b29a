import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import Messaging
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import Accounts

@Suite struct ModerationTests {
    @Test func aReportReachesTheCampusModeratorWhoSuspendsTheStudentWhoCanNoLongerLogIn() async throws {
        let app = try await AccountsTestApp.make()
        let repository = AccountPostgresRepository(database: app.database.pool)
        try await app.test { client in
            let moderatorEmail = "mod\(UUID().uuidString.prefix(8))@helsinki.fi"
            let troubleEmail = "t\(UUID().uuidString.prefix(8))@helsinki.fi"
            let aino = try await client.signUp(name: "Aino")
            let moderator = try await client.signUp(moderatorEmail, name: "Maija")
            let trouble = try await client.signUp(troubleEmail, name: "Teemu")
            let ainoToken = try #require(aino["accessToken"] as? String)
            let moderatorToken = try #require(moderator["accessToken"] as? String)
            let troubleId = try #require((trouble["user"] as? [String: Any])?["id"] as? String)
            let troubleRefresh = try #require(trouble["refreshToken"] as? String)

            let (reported, report) = try await client.post(
                "/v1/reports", ["userId": troubleId, "reason": "harassment", "detail": "Rude in the chat"],
                token: ainoToken)
            #expect(reported == .created && report["reason"] as? String == "harassment")

            // Not a moderator yet: neither the reports nor a suspension.
            let (unseen, _) = try await client.get("/v1/reports", token: moderatorToken)
            #expect(unseen == .forbidden)
            let (refused, _) = try await client.post(
                "/v1/users/\(troubleId)/suspend", ["reason": "Harassment"], token: ainoToken)
            #expect(refused == .forbidden)

            #expect(try await repository.makeModerator(email: moderatorEmail.uppercased()))
            let (seen, listed) = try await client.get("/v1/reports", token: moderatorToken)
            #expect(seen == .ok)
            let reports = listed["reports"] as? [[String: Any]] ?? []
            #expect(reports.map { ($0["userId"] as? String)?.lowercased() } == [troubleId.lowercased()])
            #expect(reports.first?["detail"] as? String == "Rude in the chat")

            let (suspended, _) = try await client.post(
                "/v1/users/\(troubleId)/suspend", ["reason": "Harassment of other students"], token: moderatorToken)
            #expect(suspended == .noContent)

            let (login, problem) = try await client.post(
                "/v1/auth/login", ["email": troubleEmail, "password": "correct horse battery"])
            #expect(login == .forbidden)
            #expect(problem["type"] as? String == "/problems/suspended")
            #expect((problem["detail"] as? String)?.contains("Harassment of other students") == true)
            let (refresh, _) = try await client.post("/v1/auth/refresh", ["refreshToken": troubleRefresh])
            #expect(refresh == .unauthorized)
        }
        let events = try await app.database.pool.query(
            "SELECT type FROM outbox WHERE type = 'user.suspended'"
        ).count
        #expect(events == 1)
    }

    @Test func badReportsAndSuspensionsAreProblemsAndStoreNothing() async throws {
        let app = try await AccountsTestApp.make()
        try await app.test { client in
            let aino = try await client.signUp(name: "Aino")
            let other = try await client.signUp(name: "Olli")
            let token = try #require(aino["accessToken"] as? String)
            let ainoId = try #require((aino["user"] as? [String: Any])?["id"] as? String)
            let otherId = try #require((other["user"] as? [String: Any])?["id"] as? String)
            let bad: [([String: Any], HTTPResponse.Status, String?)] = [
                (["userId": otherId], .badRequest, "reason"),
                (["userId": otherId, "reason": "boring"], .badRequest, "reason"),
                (["reason": "spam"], .badRequest, "userId"),
                (["userId": ainoId, "reason": "spam"], .badRequest, "userId"),
                (["userId": UUID().uuidString, "reason": "spam"], .notFound, nil),
                (
                    ["userId": otherId, "reason": "spam", "detail": String(repeating: "x", count: 2001)], .badRequest,
                    "detail"
                ),
            ]
            for (body, status, field) in bad {
                let (answer, problem) = try await client.post("/v1/reports", body, token: token)
                #expect(answer == status, "\(body)")
                if let field { #expect(problem["field"] as? String == field, "\(body): \(problem)") }
            }
            let (noReason, problem) = try await client.post("/v1/users/\(otherId)/suspend", [:], token: token)
            #expect(noReason == .badRequest && problem["field"] as? String == "reason")
        }
        let stored: Int = try await app.database.pool.query("SELECT count(*) AS n FROM reports").first!.decode("n")
        let suspended: Int = try await app.database.pool.query(
            "SELECT count(*) AS n FROM users WHERE suspended_at IS NOT NULL"
        ).first!.decode("n")
        #expect(stored == 0 && suspended == 0)
    }

    @Test func aRepeatedReportAnswersTheOpenOneAndADayHoldsAtMostTheLimit() async throws {
        let app = try await AccountsTestApp.make(["REPORTS_PER_DAY": "3"])
        try await app.test { client in
            let (token, moderatorToken) = try await Self.studentAndModerator(client, app)
            var others: [String] = []
            for name in ["Olli", "Pia", "Rami", "Sami"] {
                let other = try await client.signUp(name: name)
                others.append(try #require((other["user"] as? [String: Any])?["id"] as? String))
            }

            let (first, report) = try await client.post(
                "/v1/reports", ["userId": others[0], "reason": "spam"], token: token)
            #expect(first == .created)
            for _ in 0..<5 {
                let (again, same) = try await client.post(
                    "/v1/reports", ["userId": others[0], "reason": "harassment", "detail": "Again"], token: token)
                #expect(again == .ok && same["id"] as? String == report["id"] as? String)
                #expect(same["reason"] as? String == "spam" && same["closedAt"] == nil)
            }
            // A listing of that person is another subject.
            let listing = UUID().uuidString
            let (ofListing, _) = try await client.post(
                "/v1/reports", ["userId": others[0], "listingId": listing, "reason": "fake"], token: token)
            #expect(ofListing == .created)
            let (second, _) = try await client.post(
                "/v1/reports", ["userId": others[1], "reason": "spam"], token: token)
            #expect(second == .created)

            // Three today: a fourth subject waits until the first is a day old; a repeat still answers.
            let (limited, problem) = try await client.execute(
                uri: "/v1/reports", method: .post,
                headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                body: JSON.body(["userId": others[2], "reason": "spam"])
            ) { response in (response, JSON.object(response.body)) }
            #expect(limited.status == .tooManyRequests)
            let wait = Int(limited.headers[.retryAfter] ?? "") ?? 0
            #expect(wait > 86_000 && wait <= 86_400, "Retry-After \(wait)")
            #expect((problem["detail"] as? String)?.contains("3 reports today") == true)
            let (repeated, _) = try await client.post(
                "/v1/reports", ["userId": others[1], "reason": "spam"], token: token)
            #expect(repeated == .ok)

            // Closed, the subject may be reported again (once the day allows it).
            let reportId = try #require(report["id"] as? String)
            let (refused, _) = try await client.post("/v1/reports/\(reportId)/close", [:], token: token)
            #expect(refused == .forbidden)
            let (closed, closedReport) = try await client.post(
                "/v1/reports/\(reportId)/close", [:], token: moderatorToken)
            #expect(closed == .ok && closedReport["closedAt"] is String)
            let (unknown, _) = try await client.post(
                "/v1/reports/\(UUID().uuidString)/close", [:], token: moderatorToken)
            #expect(unknown == .notFound)
        }
        let rows: Int = try await app.database.pool.query(
            "SELECT count(*) AS n FROM reports WHERE closed_at IS NULL"
        ).first!.decode("n")
        #expect(rows == 2)
    }

    @Test func suspendingAStudentClosesTheReportsOfThem() async throws {
        let app = try await AccountsTestApp.make()
        try await app.test { client in
            let (token, moderatorToken) = try await Self.studentAndModerator(client, app)
            let trouble = try await client.signUp(name: "Teemu")
            let troubleId = try #require((trouble["user"] as? [String: Any])?["id"] as? String)
            let (reported, _) = try await client.post(
                "/v1/reports", ["userId": troubleId, "reason": "unsafe"], token: token)
            #expect(reported == .created)
            let (suspended, _) = try await client.post(
                "/v1/users/\(troubleId)/suspend", ["reason": "Unsafe"], token: moderatorToken)
            #expect(suspended == .noContent)
            let (_, listed) = try await client.get("/v1/reports", token: moderatorToken)
            let reports = listed["reports"] as? [[String: Any]] ?? []
            #expect(reports.count == 1 && reports.first?["closedAt"] is String)
        }
    }

    /// Aino, a student, and Maija, a moderator of their campus: their access tokens.
    static func studentAndModerator(_ client: any TestClientProtocol, _ app: AccountsTestApp) async throws -> (
        student: String, moderator: String
    ) {
        let moderatorEmail = "mod\(UUID().uuidString.prefix(8))@helsinki.fi"
        let aino = try await client.signUp(name: "Aino")
        let moderator = try await client.signUp(moderatorEmail, name: "Maija")
        #expect(try await AccountPostgresRepository(database: app.database.pool).makeModerator(email: moderatorEmail))
        return (
            try #require(aino["accessToken"] as? String), try #require(moderator["accessToken"] as? String)
        )
    }
}
