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

@Suite struct DeletionTests {
    @Test func aDeletedAccountLeavesNoTraceInAccountsAndItsEmailSignsUpAgainAsANewPerson() async throws {
        let app = try await AccountsTestApp.make()
        let email = "quill\(UUID().uuidString.prefix(8).lowercased())@helsinki.fi"
        let name = "Ada Quill\(UUID().uuidString.prefix(4))"
        let bio = "Counts sheep in base \(Int.random(in: 100...999))"
        try await app.test { client in
            let ada = try await client.signUp(email, name: name)
            let olli = try await client.signUp(name: "Olli Stone")
            let token = try #require(ada["accessToken"] as? String)
            let refresh = try #require(ada["refreshToken"] as? String)
            let adaId = try #require((ada["user"] as? [String: Any])?["id"] as? String)
            let olliToken = try #require(olli["accessToken"] as? String)
            let olliId = try #require((olli["user"] as? [String: Any])?["id"] as? String)
            let (patched, _) = try await client.call(.patch, "/v1/me", token: token, body: ["bio": bio])
            #expect(patched == .ok)
            let (blocked, _) = try await client.post("/v1/blocks", ["userId": olliId], token: token)
            #expect(blocked == .created)
            let (reported, _) = try await client.post(
                "/v1/reports", ["userId": adaId, "reason": "spam"], token: olliToken)
            #expect(reported == .created)
            // A failed login leaves a throttle record under her email.
            let (failed, _) = try await client.post("/v1/auth/login", ["email": email, "password": "not hers at all"])
            #expect(failed == .unauthorized)

            // A wrong password deletes nothing.
            let (wrong, problem) = try await client.call(
                .delete, "/v1/me", token: token, body: ["password": "not the password"])
            #expect(wrong == .unauthorized && problem["field"] as? String == "password")
            let (stillThere, _) = try await client.get("/v1/me", token: token)
            #expect(stillThere == .ok)
            let (missing, _) = try await client.call(.delete, "/v1/me", token: token, body: [:])
            #expect(missing == .badRequest)

            let (deleted, _) = try await client.call(
                .delete, "/v1/me", token: token, body: ["password": "correct horse battery"])
            #expect(deleted == .noContent)
            let (me, _) = try await client.get("/v1/me", token: token)
            #expect(me == .notFound)
            let (again, _) = try await client.call(
                .delete, "/v1/me", token: token, body: ["password": "correct horse battery"])
            #expect(again == .notFound)
            let (refreshed, _) = try await client.post("/v1/auth/refresh", ["refreshToken": refresh])
            #expect(refreshed == .unauthorized)
            let (login, _) = try await client.post(
                "/v1/auth/login", ["email": email, "password": "correct horse battery"])
            #expect(login == .unauthorized)
            // Others can no longer reach her: she is no one.
            let (report, _) = try await client.post(
                "/v1/reports", ["userId": adaId, "reason": "spam"], token: olliToken)
            #expect(report == .notFound)
            let (block, _) = try await client.post("/v1/blocks", ["userId": adaId], token: olliToken)
            #expect(block == .notFound)
            // Her access token outlives her account, but nothing it asks for counts.
            let (late, _) = try await client.post("/v1/reports", ["userId": olliId, "reason": "spam"], token: token)
            #expect(late == .forbidden)

            let renewed = try await client.signUp(email, name: "Ada Again")
            let newId = try #require((renewed["user"] as? [String: Any])?["id"] as? String)
            #expect(newId != adaId)
        }

        for trace in [email, name, bio] {
            let found = try await app.database.rowsContaining(trace)
            // Only the new account of the same email may hold it.
            #expect(found.allSatisfy { $0.contains("Ada Again") }, "\(trace) is still in \(found)")
        }
        #expect(try await app.database.rowsContaining(name).isEmpty)
        let deletedEvents = try await app.database.pool.query(
            "SELECT payload::text AS p FROM outbox WHERE type = 'user.deleted'"
        ).map { try $0.decode("p", as: String.self) }
        let gone: UUID = try await app.database.pool.query("SELECT id FROM users WHERE deleted_at IS NOT NULL").first!
            .decode("id")
        #expect(deletedEvents.count == 1 && deletedEvents[0].lowercased().contains(gone.uuidString.lowercased()))
        #expect(try await app.database.rowsContaining("Olli Stone").isEmpty == false)
    }
}
