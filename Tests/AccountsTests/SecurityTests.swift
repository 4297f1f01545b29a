import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import ServiceKit
import TestSupport
import Testing

@testable import Accounts

@Suite struct SecurityTests {
    @Test func forgedAndStaleTokensAreRefused() async throws {
        let app = try await AccountsTestApp.make()
        let header = Data(#"{"alg":"none","typ":"JWT"}"#.utf8).base64URLEncoded
        let payload = Data(
            #"{"sub":"\#(UUID())","campus":"helsinki.fi","name":"M","iss":"tarrare-accounts","aud":"tarrare","exp":\#(Int(Date().timeIntervalSince1970) + 600),"iat":0,"jti":"x"}"#
                .utf8
        ).base64URLEncoded
        let tokens = [
            "\(header).\(payload).",
            try await accessToken(signedBy: EdDSA.PrivateKey()),
            try await accessToken(signedBy: app.privateKey, audience: "someone-else"),
            try await accessToken(signedBy: app.privateKey, issuer: "someone-else"),
            try await accessToken(signedBy: app.privateKey, issuedAt: Date().addingTimeInterval(-3600), lifetime: 900),
            "not a token",
        ]

        try await app.test { client in
            let good = try await accessToken(signedBy: app.privateKey)
            let (accepted, _) = try await client.get("/v1/me", token: good)
            #expect(accepted == .notFound, "a valid token of an unknown user passes authentication")
            for token in tokens {
                let (status, problem) = try await client.get("/v1/me", token: token)
                #expect(status == .unauthorized)
                #expect(problem["status"] as? Int == 401)
            }
            let (missing, _) = try await client.get("/v1/me", token: nil)
            #expect(missing == .unauthorized)
        }
    }

    @Test func reusingASpentRefreshTokenRevokesTheWholeFamily() async throws {
        let app = try await AccountsTestApp.make()

        try await app.test { client in
            let session = try await client.signUp()
            let first = try #require(session["refreshToken"] as? String)
            let (_, rotated) = try await client.post("/v1/auth/refresh", ["refreshToken": first])
            let second = try #require(rotated["refreshToken"] as? String)

            let (reuse, _) = try await client.post("/v1/auth/refresh", ["refreshToken": first])
            let (afterReuse, _) = try await client.post("/v1/auth/refresh", ["refreshToken": second])

            #expect(reuse == .unauthorized)
            #expect(afterReuse == .unauthorized)
        }
    }

    @Test func aWrongPasswordAndAnUnknownEmailGetTheSameAnswer() async throws {
        let app = try await AccountsTestApp.make()

        try await app.test { client in
            _ = try await client.signUp("known@helsinki.fi")
            let (wrongStatus, wrong) = try await client.post(
                "/v1/auth/login", ["email": "known@helsinki.fi", "password": "not the password"])
            let (unknownStatus, unknown) = try await client.post(
                "/v1/auth/login", ["email": "nobody@helsinki.fi", "password": "not the password"])

            #expect(wrongStatus == .unauthorized)
            #expect(unknownStatus == wrongStatus)
            #expect(NSDictionary(dictionary: wrong).isEqual(to: unknown))
        }
    }

    @Test func repeatedFailuresAreThrottled() async throws {
        let app = try await AccountsTestApp.make()

        try await app.test { client in
            _ = try await client.signUp("target@helsinki.fi")
            // The window begins with the first failure: what is left of it shrinks with the time these requests take.
            let start = ContinuousClock.now
            func elapsed() -> Int { Int((ContinuousClock.now - start).components.seconds) }
            for _ in 0..<3 {
                let (status, _) = try await client.post(
                    "/v1/auth/login", ["email": "target@helsinki.fi", "password": "guess guess"])
                #expect(status == .unauthorized)
            }
            let response = try await client.execute(
                uri: "/v1/auth/login", method: .post, headers: [.contentType: "application/json"],
                body: JSON.body(["email": "target@helsinki.fi", "password": "correct horse battery"])
            ) { $0 }

            #expect(response.status == .tooManyRequests)
            #expect(
                response.headers[.retryAfter].flatMap(Int.init).map { (900 - elapsed() - 2...900).contains($0) } == true
            )

            // Ten minutes later, what is left of the fifteen-minute window is five minutes.
            try await app.database.pool.query(
                "UPDATE throttle_events SET happened_at = happened_at - interval '600 seconds'")
            let later = try await client.execute(
                uri: "/v1/auth/login", method: .post, headers: [.contentType: "application/json"],
                body: JSON.body(["email": "target@helsinki.fi", "password": "correct horse battery"])
            ) { $0 }
            #expect(later.status == .tooManyRequests)
            #expect(
                later.headers[.retryAfter].flatMap(Int.init).map { (300 - elapsed() - 2...300).contains($0) } == true)
        }
    }

    @Test func signUpsFromOneAddressAreThrottled() async throws {
        let app = try await AccountsTestApp.make(["SIGNUP_MAX_PER_ADDRESS": "2", "TRUST_FORWARDED_FOR": "true"])

        try await app.test { client in
            func signUp(from address: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/v1/auth/signup", method: .post,
                    headers: [.contentType: "application/json", .init("X-Forwarded-For")!: address],
                    body: JSON.body([
                        "email": "s\(UUID().uuidString.prefix(8))@helsinki.fi", "password": "correct horse battery",
                        "name": "Sam",
                    ])
                ) { $0 }
            }
            let start = ContinuousClock.now
            #expect(try await signUp(from: "192.0.2.7").status == .created)
            #expect(try await signUp(from: "192.0.2.7").status == .created)
            let refused = try await signUp(from: "192.0.2.7")
            // The window began with the first sign-up: what is left of it is the hour less the time since then.
            let elapsed = Int((ContinuousClock.now - start).components.seconds)
            #expect(refused.status == .tooManyRequests)
            #expect(refused.headers[.contentType] == "application/problem+json")
            #expect(
                refused.headers[.retryAfter].flatMap(Int.init).map { (3600 - elapsed - 2...3600).contains($0) } == true)
            #expect(try await signUp(from: "192.0.2.8").status == .created)
        }
        let users = try await app.database.pool.query("SELECT count(*) AS n FROM users").first?.decode(
            "n", as: Int.self)
        #expect(users == 3)
    }

    @Test(arguments: [
        "\u{202E}", "\u{200D}\u{200D}\u{200B}", "Ann\u{202E}ahc", "\u{2066}Aino\u{2069}", "\u{3164}",
        "\u{2800}\u{2800}",
        "\u{0301}", "\u{FE0F}",
    ])
    func aNameThatIsInvisibleOrTurnsTextAroundIsRefused(name: String) async throws {
        #expect(throws: AccountError.self) { try AccountRules.normalizedName(name) }
    }

    @Test func aNameOfEightyLettersWithAccentsIsOverEightyCodePoints() {
        #expect(throws: AccountError.self) { try AccountRules.normalizedName(String(repeating: "a\u{308}", count: 80)) }
        #expect(throws: AccountError.self) { try AccountRules.normalizedName(" " + String(repeating: "a", count: 80)) }
    }

    @Test(arguments: ["Zoë", "李小龙", "👩\u{200D}💻 Ada", "O'Brien-Smith", "أمينة"])
    func aNameInAnyScriptIsAccepted(name: String) throws {
        #expect(try AccountRules.normalizedName(name) == name)
    }

    @Test func renamingToAnInvisibleNameIsRefusedAndChangesNothing() async throws {
        let app = try await AccountsTestApp.make()

        try await app.test { client in
            let token = try await client.signUp(name: "Aino")["accessToken"] as! String
            let (status, problem) = try await client.execute(
                uri: "/v1/me", method: .patch,
                headers: [.contentType: "application/json", .authorization: "Bearer \(token)"],
                body: JSON.body(["name": "\u{202E}\u{200D}"])
            ) { ($0.status, JSON.object($0.body)) }
            #expect(status == .badRequest)
            #expect(problem["field"] as? String == "name")
            let (_, me) = try await client.get("/v1/me", token: token)
            #expect(me["name"] as? String == "Aino")
        }
    }

    @Test func answersWithTokensAreNeverCachedAndNoAnswerIsSniffed() async throws {
        let app = try await AccountsTestApp.make()

        try await app.test { client in
            let email = "cache\(UUID().uuidString.prefix(8))@helsinki.fi"
            let signUp = try await client.execute(
                uri: "/v1/auth/signup", method: .post, headers: [.contentType: "application/json"],
                body: JSON.body(["email": email, "password": "correct horse battery", "name": "Cai"])
            ) { $0 }
            let refreshToken = JSON.object(signUp.body)["refreshToken"] as! String
            let logIn = try await client.execute(
                uri: "/v1/auth/login", method: .post, headers: [.contentType: "application/json"],
                body: JSON.body(["email": email, "password": "correct horse battery"])
            ) { $0 }
            let refresh = try await client.execute(
                uri: "/v1/auth/refresh", method: .post, headers: [.contentType: "application/json"],
                body: JSON.body(["refreshToken": refreshToken])
            ) { $0 }
            for response in [signUp, logIn, refresh] {
                #expect(response.status.code < 300)
                #expect(response.headers[.cacheControl] == "no-store")
            }
            for path in ["/v1/campuses", "/v1/nowhere", "/v1/me"] {
                let response = try await client.execute(uri: path, method: .get) { $0 }
                #expect(response.headers[.xContentTypeOptions] == "nosniff", "\(path)")
            }
        }
    }

    @Test func anAccessTokenInTheQueryIsNotAccepted() async throws {
        let app = try await AccountsTestApp.make()

        try await app.test { client in
            let token = try await client.signUp()["accessToken"] as! String
            let (status, _) = try await client.get("/v1/me?access_token=\(token)", token: nil)
            #expect(status == .unauthorized)
            let (withHeader, _) = try await client.get("/v1/me", token: token)
            #expect(withHeader == .ok)
        }
    }

    @Test func aBodyOverTheLimitIs413() async throws {
        let app = try await AccountsTestApp.make()

        try await app.test { client in
            let (status, problem) = try await client.post(
                "/v1/auth/signup",
                [
                    "email": "big@helsinki.fi", "password": "correct horse battery",
                    "name": String(repeating: "x", count: 5000),
                ])

            #expect(status == .contentTooLarge)
            #expect(problem["status"] as? Int == 413)
        }
    }

    @Test(arguments: ["{\"email\": ", "[1, 2]", "{\"email\": 5, \"password\": \"x\", \"name\": \"y\"}", ""])
    func malformedJSONIs400AndChangesNothing(body: String) async throws {
        let app = try await AccountsTestApp.make()

        try await app.test { client in
            let response = try await client.execute(
                uri: "/v1/auth/signup", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: body)
            ) { $0 }

            #expect(response.status == .badRequest)
            #expect(response.headers[.contentType] == "application/problem+json")
        }
        let users = try await app.database.pool.query("SELECT count(*) AS n FROM users").first?.decode(
            "n", as: Int.self)
        #expect(users == 0)
    }
}
