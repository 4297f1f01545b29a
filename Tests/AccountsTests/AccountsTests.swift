import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import Messaging
import ServiceKit
import TestSupport
import Testing

@testable import Accounts

@Suite struct AccountsTests {
    @Test func aStudentSignsUpLogsInReadsTheirProfileRefreshesAndLogsOut() async throws {
        let app = try await AccountsTestApp.make()

        try await app.test { client in
            let signup = try await client.signUp("Aino.Virtanen@Helsinki.fi", name: "Aino")
            let user = try #require(signup["user"] as? [String: Any])
            #expect(user["email"] as? String == "aino.virtanen@helsinki.fi")
            #expect(user["campus"] as? String == "helsinki.fi")
            #expect(user["mode"] as? String == "ordering")

            let (loginStatus, login) = try await client.post(
                "/v1/auth/login", ["email": "aino.virtanen@helsinki.fi", "password": "correct horse battery"])
            #expect(loginStatus == .ok)
            #expect(login["expiresIn"] as? Int == 900)
            let accessToken = try #require(login["accessToken"] as? String)
            let refreshToken = try #require(login["refreshToken"] as? String)

            let (meStatus, me) = try await client.get("/v1/me", token: accessToken)
            #expect(meStatus == .ok)
            #expect(me["name"] as? String == "Aino")

            let (refreshStatus, refreshed) = try await client.post("/v1/auth/refresh", ["refreshToken": refreshToken])
            #expect(refreshStatus == .ok)
            let newRefreshToken = try #require(refreshed["refreshToken"] as? String)
            #expect(newRefreshToken != refreshToken)

            let (logoutStatus, _) = try await client.post("/v1/auth/logout", ["refreshToken": newRefreshToken])
            #expect(logoutStatus == .noContent)
            let (afterLogout, _) = try await client.post("/v1/auth/refresh", ["refreshToken": newRefreshToken])
            #expect(afterLogout == .unauthorized)
        }
    }

    @Test func anEmailOfAnUnknownCampusIsRefusedWithAProblem() async throws {
        let app = try await AccountsTestApp.make()

        try await app.test { client in
            try await client.execute(
                uri: "/v1/auth/signup", method: .post, headers: [.contentType: "application/json"],
                body: JSON.body(["email": "someone@example.com", "password": "correct horse battery", "name": "X"])
            ) { response in
                let problem = JSON.object(response.body)
                #expect(response.status == .badRequest)
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(problem["type"] as? String == "/problems/unknown-campus")
                #expect(problem["field"] as? String == "email")
                #expect((problem["detail"] as? String)?.contains("example.com") == true)
            }
        }
        let users = try await app.database.pool.query("SELECT count(*) AS n FROM users").first?.decode(
            "n", as: Int.self)
        #expect(users == 0)
    }

    @Test(arguments: [
        ("short", "password"), (String(repeating: "å", count: 40), "password"), ("password123", "password"),
    ])
    func aWeakOrTruncatablePasswordIsRefused(password: String, field: String) async throws {
        let app = try await AccountsTestApp.make()

        try await app.test { client in
            let (status, problem) = try await client.post(
                "/v1/auth/signup", ["email": "weak@helsinki.fi", "password": password, "name": "W"])
            #expect(status == .badRequest)
            #expect(problem["field"] as? String == field)
        }
    }

    @Test func signingUpPublishesUserRegisteredThroughTheOutbox() async throws {
        let app = try await AccountsTestApp.make()
        // A consumer of the event, as other services declare themselves.
        var handlers = EventHandlers()
        handlers.on(UserRegistered.self, from: "accounts") { _, _ in }
        try Topology(service: "observer", handlers: handlers).declare(amqpURL: app.broker.url)

        try await app.test { client in
            _ = try await client.signUp(name: "Eero")
            try await eventually("user.registered in the observer's queue and its outbox row marked sent") {
                guard try await app.broker.messageCounts()["observer.accounts"] == 1 else { return false }
                return try await app.database.pool.query("SELECT 1 FROM outbox_unsent").isEmpty
            }
        }
        let outbox = try await app.database.pool.query("SELECT type, payload->'user'->>'name' AS name FROM outbox")
        #expect(outbox.count == 1)
        #expect(try outbox.first?.decode("type", as: String.self) == "user.registered")
        #expect(try outbox.first?.decode("name", as: String.self) == "Eero")
    }

    @Test func updatingTheProfileChangesItAndPublishesUserUpdated() async throws {
        let app = try await AccountsTestApp.make()

        try await app.test { client in
            let session = try await client.signUp(name: "Eero")
            let token = try #require(session["accessToken"] as? String)
            let patched = try await client.execute(
                uri: "/v1/me", method: .patch,
                headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                body: JSON.body(["name": "Eero K", "mode": "delivering"])
            ) { ($0.status, JSON.object($0.body)) }
            #expect(patched.0 == .ok)
            #expect(patched.1["mode"] as? String == "delivering")
            #expect(patched.1["name"] as? String == "Eero K")

            let invalid = try await client.execute(
                uri: "/v1/me", method: .patch,
                headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                body: JSON.body(["mode": "flying"])
            ) { ($0.status, JSON.object($0.body)) }
            #expect(invalid.0 == .badRequest)
            #expect(invalid.1["field"] as? String == "mode")
        }
        let types = try await app.database.pool.query("SELECT type FROM outbox ORDER BY seq").map {
            try $0.decode("type", as: String.self)
        }
        #expect(types == ["user.registered", "user.updated"])
    }

    @Test func theBioAndPhotoAreTheStudentsAndTravelInUserUpdated() async throws {
        let app = try await AccountsTestApp.make()
        let (photoId, someoneElses) = (UUID(), UUID())

        try await app.test { client in
            let session = try await client.signUp(name: "Saara")
            let token = try #require(session["accessToken"] as? String)
            let userId = try #require(
                ((session["user"] as? [String: Any])?["id"] as? String).flatMap { UUID(uuidString: $0) })
            // What media announced, applied as the consumer would.
            try await app.handle(
                MediaStored(
                    mediaId: photoId, ownerId: userId, campus: "helsinki.fi", contentType: "image/jpeg", width: 1600,
                    height: 1200))
            try await app.handle(
                MediaStored(
                    mediaId: someoneElses, ownerId: UUID(), campus: "helsinki.fi", contentType: "image/png", width: 9,
                    height: 9))
            func patch(_ body: [String: Any]) async throws -> (HTTPResponse.Status, [String: Any]) {
                try await client.execute(
                    uri: "/v1/me", method: .patch,
                    headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                    body: JSON.body(body)
                ) { ($0.status, JSON.object($0.body)) }
            }
            let (status, account) = try await patch([
                "bio": "  Second-year physics.\nAsk me about optics.  ", "photoId": photoId.uuidString,
            ])
            #expect(status == .ok)
            #expect(account["bio"] as? String == "Second-year physics.\nAsk me about optics.")
            #expect((account["photoId"] as? String).flatMap { UUID(uuidString: $0) } == photoId)
            let (_, me) = try await client.get("/v1/me", token: token)
            #expect(me["bio"] as? String == "Second-year physics.\nAsk me about optics.")

            for (body, field) in [
                (["photoId": "not-an-id"], "photoId"), (["bio": String(repeating: "b", count: 501)], "bio"),
                (["bio": "Hi \u{202E}txet"], "bio"), (["bio": "bell \u{07}"], "bio"),
            ] as [([String: Any], String)] {
                let (refused, problem) = try await patch(body)
                #expect(refused == .badRequest && problem["field"] as? String == field, "\(body)")
            }
            for notTheirs in [someoneElses, UUID()] {
                let (refused, problem) = try await patch(["photoId": notTheirs.uuidString])
                #expect(refused == .notFound && problem["field"] as? String == "photoId")
            }
            let (_, unchanged) = try await client.get("/v1/me", token: token)
            #expect((unchanged["photoId"] as? String).flatMap { UUID(uuidString: $0) } == photoId)

            // Deleting the image in media takes it off the profile.
            try await app.handle(MediaDeleted(mediaId: photoId, ownerId: userId))
            let (_, withoutPhoto) = try await client.get("/v1/me", token: token)
            #expect(withoutPhoto["photoId"] == nil)
            let (refused, _) = try await patch(["photoId": photoId.uuidString])
            #expect(refused == .notFound)
        }
        let events = Array(
            try await app.database.pool.query(
                """
                SELECT payload->'user'->>'bio' AS bio, payload->'user'->>'photoId' AS photo FROM outbox
                WHERE type = 'user.updated' ORDER BY seq
                """))
        #expect(events.count == 2)
        #expect(try events.first?.decode("bio", as: String.self) == "Second-year physics.\nAsk me about optics.")
        #expect(try events.first?.decode("photo", as: String?.self).flatMap { UUID(uuidString: $0) } == photoId)
        #expect(try events.last?.decode("photo", as: String?.self) == nil)
    }

    @Test func campusesAndTheKeySetArePublic() async throws {
        let app = try await AccountsTestApp.make()

        try await app.test { client in
            let (status, body) = try await client.get("/v1/campuses", token: nil)
            let campuses = try #require(body["campuses"] as? [[String: Any]])
            #expect(status == .ok)
            // The bundled campus and the tests' second one, from CAMPUSES_FILE.
            #expect(campuses.map { $0["domain"] as? String } == ["aalto.fi", "helsinki.fi"])
            #expect(campuses.first?["name"] as? String == "Aalto University, Otaniemi")

            let (_, jwks) = try await client.get("/.well-known/jwks.json", token: nil)
            let key = try #require((jwks["keys"] as? [[String: Any]])?.first)
            #expect(key["crv"] as? String == "Ed25519")
            #expect(key["x"] as? String == app.privateKey.publicKey.rawRepresentation.base64URLEncoded)
        }
    }

    @Test func verificationWhenRequiredGatesLogin() async throws {
        let app = try await AccountsTestApp.make(["REQUIRE_EMAIL_VERIFICATION": "true"])

        try await app.test { client in
            let signup = try await client.signUp("veri@helsinki.fi")
            #expect(signup["accessToken"] == nil)
            #expect(signup["verificationRequired"] as? Bool == true)
            let (blocked, _) = try await client.post(
                "/v1/auth/login", ["email": "veri@helsinki.fi", "password": "correct horse battery"])
            #expect(blocked == .forbidden)
            let (wrong, _) = try await client.post("/v1/auth/verify", ["email": "veri@helsinki.fi", "code": "000000"])
            #expect(wrong == .badRequest)

            // The log mailer does not hand the code over, so the test sets a known one.
            try await app.database.pool.query(
                "UPDATE email_verifications SET code_hash = sha256(convert_to('123456', 'UTF8'))")
            let (verified, user) = try await client.post(
                "/v1/auth/verify", ["email": "veri@helsinki.fi", "code": "123456"])
            #expect(verified == .ok)
            #expect(user["emailVerified"] as? Bool == true)
            let (allowed, _) = try await client.post(
                "/v1/auth/login", ["email": "veri@helsinki.fi", "password": "correct horse battery"])
            #expect(allowed == .ok)
        }
    }
}

@Suite struct OpenAPITests {
    @Test func everyRouteIsDescribedAndEveryDescribedOperationIsServed() async throws {
        let app = try await AccountsTestApp.make()

        try await app.test { client in
            let document = try await client.execute(uri: "/openapi.yaml", method: .get) { String(buffer: $0.body) }
            #expect(document.contains("/v1/auth/signup:"))
        }
    }
}
