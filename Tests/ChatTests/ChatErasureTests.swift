import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import Messaging
import Postgres
import TestSupport
import Testing

@testable import Chat

@Suite struct ChatErasureTests {
    @Test func aDeletedAccountLeavesNoTraceAndTheOtherMemberSeesItsMessagesRemoved() async throws {
        let app = try await ChatTestApp.make()
        let (ada, bob) = (UUID(), UUID())
        let match = MatchOpened(
            matchId: UUID(), flow: "delivery", campus: "helsinki.fi",
            members: [
                MatchMember(userId: ada, name: "Ada Quill", role: "orderer"),
                MatchMember(userId: bob, name: "Bob Stone", role: "deliverer"),
            ],
            subject: "Soup to Porthania", version: 1)
        try await app.apply { connection in
            for (id, name) in [(ada, "Ada Quill"), (bob, "Bob Stone")] {
                try ConversationPostgresRepository.applyUser(
                    UserSnapshot(userId: id, campus: "helsinki.fi", name: name, mode: "ordering"), version: 1,
                    on: connection)
            }
            try ConversationPostgresRepository.open(match, on: connection)
        }
        let (adaToken, bobToken) = (
            try await app.token(ada, name: "Ada Quill"), try await app.token(bob, name: "Bob Stone")
        )
        let path = "/v1/conversations/\(match.matchId)"
        let adasMessage = UUID().uuidString
        let deleted = UserDeleted(userId: ada, campus: "helsinki.fi")

        try await app.test { client in
            let (adaSent, _) = try await client.call(
                .post, "\(path)/messages", token: adaToken, body: ["id": adasMessage, "text": "see you at the library"])
            let (bobSent, _) = try await client.call(
                .post, "\(path)/messages", token: bobToken,
                body: ["id": UUID().uuidString, "text": "bring the notes, Ada"])
            #expect(adaSent == .created && bobSent == .created)
            #expect(try await app.database.rowsContaining("Ada Quill").count >= 3)

            try await app.apply { connection in
                let handled = try MatchEventsConsumer.handlers.apply(deleted, on: connection)
                #expect(handled)
            }

            let (_, history) = try await client.call(.get, "\(path)/messages", token: bobToken)
            let messages = try #require(history["messages"] as? [[String: Any]])
            #expect(messages.count == 2)
            #expect(
                messages[0]["text"] as? String == "bring the notes, Ada" && messages[0]["removed"] as? Bool == false)
            #expect(messages[1]["id"] as? String == adasMessage)
            #expect(messages[1]["text"] as? String == "" && messages[1]["removed"] as? Bool == true)
            // Bob's open chat hears of it at once: which messages, and nothing of who wrote them or what.
            let removals = try await app.database.pool.query(
                "SELECT payload::text AS payload FROM outbox WHERE type = \(MessagesRemoved.type)"
            ).map { try $0.decode("payload", as: String.self) }
            #expect(removals.count == 1)
            let removal = try JSONDecoder().decode(MessagesRemoved.self, from: Data(removals[0].utf8))
            #expect(removal.conversationId == match.matchId && removal.recipients == [bob])
            #expect(removal.messageIds.map(\.uuidString) == [adasMessage])
            #expect(!removals[0].lowercased().contains(ada.uuidString.lowercased()))
            let (_, list) = try await client.call(.get, "/v1/conversations", token: bobToken)
            let conversation = try #require((list["conversations"] as? [[String: Any]])?.first)
            #expect((conversation["otherMember"] as? [String: Any])?["name"] as? String == ErasedPerson.name)

            // Their access token still lasts: what they send now, or again, is refused and stores nothing.
            let (late, problem) = try await client.call(
                .post, "\(path)/messages", token: adaToken, body: ["id": UUID().uuidString, "text": "still here?"])
            let (again, _) = try await client.call(
                .post, "\(path)/messages", token: adaToken, body: ["id": adasMessage, "text": "see you at the library"])
            #expect(late == .forbidden && problem["title"] as? String == "Account deleted")
            #expect(again == .forbidden)
        }
        // NB: once the application stopped, so that its relay marks no outbox row sent meanwhile.
        let afterOnce = try await app.database.rowsContaining("")
        try await app.apply { try MatchEventsConsumer.handlers.apply(deleted, on: $0) }
        let afterTwice = try await app.database.rowsContaining("")
        let changed = Set(afterTwice).symmetricDifference(afterOnce)
        #expect(changed.isEmpty, "\(changed)")
        // Events delayed behind the deletion still name her; they change nothing of it.
        try await app.apply { connection in
            try MatchEventsConsumer.handlers.apply(
                UserUpdated(
                    user: UserSnapshot(userId: ada, campus: "helsinki.fi", name: "Ada Quill", mode: "ordering"),
                    version: 2), on: connection)
            try MatchEventsConsumer.handlers.apply(
                MatchOpened(
                    matchId: UUID(), flow: "tutoring", campus: "helsinki.fi",
                    members: [
                        MatchMember(userId: ada, name: "Ada Quill", role: "student"),
                        MatchMember(userId: bob, name: "Bob Stone", role: "tutor"),
                    ],
                    subject: "Calculus", version: 1), on: connection)
        }

        for trace in ["Ada Quill", "library", "still here"] {
            #expect(try await app.database.rowsContaining(trace) == [], "\(trace)")
        }
        #expect(try await app.database.rowsContaining("Bob Stone").contains { $0.hasPrefix("users: ") })
        #expect(try await app.database.rowsContaining("bring the notes, Ada").contains { $0.hasPrefix("outbox: ") })
    }

    @Test func aSendThatWaitedForTheErasureOfItsSenderIsRefused() async throws {
        let app = try await ChatTestApp.make()
        let (ada, bob) = (UUID(), UUID())
        let match = MatchOpened.between(orderer: ada, deliverer: bob)
        try await app.apply { try ConversationPostgresRepository.open(match, on: $0) }
        let adaToken = try await app.token(ada, name: "Olli")
        // The erasure has marked her memberships and holds them until it commits.
        let erasure = try PostgresConnection(url: app.database.url)
        try erasure.query("BEGIN")
        try ConversationPostgresRepository.erase(UserDeleted(userId: ada, campus: "helsinki.fi"), on: erasure)

        try await app.test { client in
            let waiting = Task {
                let (status, problem) = try await client.call(
                    .post, "/v1/conversations/\(match.matchId)/messages", token: adaToken,
                    body: ["id": UUID().uuidString, "text": "sent as she left"])
                return (status, problem["title"] as? String)
            }
            try await eventually("the send waits for the erasure's lock") {
                try await !app.database.pool.query(
                    "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                ).isEmpty
            }
            try erasure.query("COMMIT")
            let (status, title) = try await waiting.value
            #expect(status == .forbidden && title == "Account deleted")
        }
        #expect(try await app.database.rowsContaining("sent as she left") == [])
    }
}
