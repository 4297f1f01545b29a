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

@Suite struct BlockTests {
    @Test func aStudentBlocksAnotherOnceListsAndLiftsItWithEventsForTheOtherServices() async throws {
        let app = try await AccountsTestApp.make()
        try await app.test { client in
            let aino = try await client.signUp(name: "Aino")
            let olli = try await client.signUp(name: "Olli Opiskelija")
            let token = try #require(aino["accessToken"] as? String)
            let olliId = try #require((olli["user"] as? [String: Any])?["id"] as? String)

            let (blocked, block) = try await client.post("/v1/blocks", ["userId": olliId], token: token)
            #expect(blocked == .created && block["name"] as? String == "Olli Opiskelija")
            let (again, _) = try await client.post("/v1/blocks", ["userId": olliId], token: token)
            #expect(again == .ok)
            let (_, listed) = try await client.get("/v1/blocks", token: token)
            let ids = (listed["blocks"] as? [[String: Any]])?.compactMap { $0["userId"] as? String }
            #expect(ids?.map { $0.lowercased() } == [olliId.lowercased()])

            let (lifted, _) = try await client.call(.delete, "/v1/blocks/\(olliId)", token: token)
            #expect(lifted == .noContent)
            let (_, after) = try await client.get("/v1/blocks", token: token)
            #expect((after["blocks"] as? [Any])?.isEmpty == true)
        }
        let events = try await app.database.pool.query("SELECT type FROM outbox ORDER BY seq").map {
            try $0.decode("type", as: String.self)
        }
        #expect(
            events.filter { $0.hasPrefix("user.") && $0 != "user.registered" } == ["user.blocked", "user.unblocked"])
    }

    @Test func blockingOneselfAnUnknownUserOrOneOfAnotherCampusIsAProblemAndChangesNothing() async throws {
        let app = try await AccountsTestApp.make()
        try await app.test { client in
            let aino = try await client.signUp(name: "Aino")
            let token = try #require(aino["accessToken"] as? String)
            let ainoId = try #require((aino["user"] as? [String: Any])?["id"] as? String)
            // Oona signs up on the second campus the tests run with.
            let other = try await client.signUp("oona\(UUID().uuidString.prefix(8))@aalto.fi", name: "Oona")
            let otherId = try #require((other["user"] as? [String: Any])?["id"] as? String)

            let (own, ownProblem) = try await client.post("/v1/blocks", ["userId": ainoId], token: token)
            #expect(own == .badRequest && ownProblem["field"] as? String == "userId")
            let (unknown, _) = try await client.post("/v1/blocks", ["userId": UUID().uuidString], token: token)
            #expect(unknown == .notFound)
            let (elsewhere, _) = try await client.post("/v1/blocks", ["userId": otherId], token: token)
            #expect(elsewhere == .notFound)
            let (garbled, garbledProblem) = try await client.post("/v1/blocks", ["userId": "x"], token: token)
            #expect(garbled == .badRequest && garbledProblem["field"] as? String == "userId")
            let (anonymous, _) = try await client.post("/v1/blocks", ["userId": otherId])
            #expect(anonymous == .unauthorized)
        }
        let blocks: Int = try await app.database.pool.query("SELECT count(*) AS n FROM blocks").first!.decode("n")
        #expect(blocks == 0)
    }
}
