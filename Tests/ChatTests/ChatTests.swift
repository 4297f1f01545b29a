import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import Messaging
import Postgres
import ServiceKit
import ServiceLifecycle
import TestSupport
import Testing

@testable import Chat

/// The real chat application on a fresh database and vhost.
struct ChatTestApp: ServiceTestApp {
    let service: TestService

    static func make(environment: [String: String] = [:]) async throws -> ChatTestApp {
        ChatTestApp(
            service: try await TestService.make(
                "chat", migrations: ["Services/Chat/Migrations"], environment: environment))
    }

    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await service.test(buildApplication, body)
    }

    /// Applies a match event as the consumer would.
    func apply(_ body: @escaping @Sendable (PostgresConnection) throws -> Void) async throws {
        try await service.database.pool.transaction { try body($0) }
    }
}

extension MatchOpened {
    /// A delivery match between two students, as matching announces it.
    static func between(orderer: UUID, deliverer: UUID) -> MatchOpened {
        MatchOpened(
            matchId: UUID(), flow: "delivery", campus: "helsinki.fi",
            members: [
                MatchMember(userId: orderer, name: "Olli", role: "orderer"),
                MatchMember(userId: deliverer, name: "Eero", role: "deliverer"),
            ],
            subject: "Soup to Porthania", version: 1)
    }

    func closed(version: Int64) -> MatchClosed {
        MatchClosed(
            matchId: matchId, flow: flow, reason: "completed", memberIds: members.map(\.userId), version: version)
    }
}

/// A send's status, `Retry-After` and problem type.
private typealias Sent = (status: HTTPResponse.Status, retryAfter: String?, type: String?)

/// Sends `text` as a new message (an id of its own) to the conversation at `path`.
private func sendMessage(_ text: String, to path: String, token: String, _ client: any TestClientProtocol) async throws
    -> Sent
{
    try await client.execute(
        uri: path, method: .post, headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
        body: ByteBuffer(string: #"{"id":"\#(UUID().uuidString)","text":"\#(text)"}"#)
    ) { response in
        let problem = try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))
        return (response.status, response.headers[.retryAfter], (problem as? [String: Any])?["type"] as? String)
    }
}

/// The value of the line `name` of the service's `/metrics` (a gauge's is written as a Double: `1.0`).
private func metric(_ name: String, _ client: any TestClientProtocol) async throws -> Int? {
    try await client.execute(uri: "/metrics", method: .get) { response in
        String(buffer: response.body).split(separator: "\n").first { $0.hasPrefix("\(name) ") }
            .flatMap { Double($0.split(separator: " ")[1]) }.map { Int($0) }
    }
}

@Suite struct ChatTests {
    @Test func membersChatWithUnreadCountsAndHistoryByCursor() async throws {
        let app = try await ChatTestApp.make()
        let (olli, eero) = (UUID(), UUID())
        let match = MatchOpened.between(orderer: olli, deliverer: eero)
        try await app.apply { try ConversationPostgresRepository.open(match, on: $0) }
        let (olliToken, eeroToken) = (try await app.token(olli, name: "Olli"), try await app.token(eero, name: "Eero"))
        let path = "/v1/conversations/\(match.matchId)"

        try await app.test { client in
            var sent: [String] = []
            for index in 1...5 {
                let id = UUID().uuidString
                let (status, _) = try await client.call(
                    .post, "\(path)/messages", token: olliToken, body: ["id": id, "text": "Hei \(index) 👋"])
                #expect(status == .created)
                sent.append(id)
            }
            let (retry, again) = try await client.call(
                .post, "\(path)/messages", token: olliToken, body: ["id": sent[0], "text": "Hei 1 👋"])
            #expect(retry == .ok && again["text"] as? String == "Hei 1 👋")
            let (taken, _) = try await client.call(
                .post, "\(path)/messages", token: eeroToken, body: ["id": sent[1], "text": "Not mine"])
            #expect(taken == .conflict)

            let (_, list) = try await client.call(.get, "/v1/conversations", token: eeroToken)
            let conversation = try #require((list["conversations"] as? [[String: Any]])?.first)
            #expect(conversation["unreadCount"] as? Int == 5)
            #expect((conversation["otherMember"] as? [String: Any])?["name"] as? String == "Olli")
            let others = (conversation["otherMembers"] as? [[String: Any]])?.compactMap { $0["role"] as? String }
            #expect(others == ["orderer"])
            #expect(conversation["subject"] as? String == "Soup to Porthania")
            #expect(conversation["flow"] as? String == "delivery")
            #expect((conversation["lastMessage"] as? [String: Any])?["text"] as? String == "Hei 5 👋")

            let (_, firstPage) = try await client.call(.get, "\(path)/messages?limit=3", token: eeroToken)
            let newest = (firstPage["messages"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
            #expect(newest == [sent[4], sent[3], sent[2]])
            let cursor = try #require(firstPage["next"] as? String)
            let (_, secondPage) = try await client.call(
                .get, "\(path)/messages?limit=3&before=\(cursor)", token: eeroToken)
            #expect(
                (secondPage["messages"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [sent[1], sent[0]])
            #expect(secondPage["next"] == nil)

            let (read, _) = try await client.call(.post, "\(path)/read", token: eeroToken, body: ["messageId": sent[3]])
            #expect(read == .noContent)
            // Read again where the marker is, or before it: the same answer, and nothing more to tell.
            for again in [sent[3], sent[1]] {
                let (status, _) = try await client.call(
                    .post, "\(path)/read", token: eeroToken, body: ["messageId": again])
                #expect(status == .noContent)
            }
            let (_, after) = try await client.call(.get, "/v1/conversations", token: eeroToken)
            #expect((after["conversations"] as? [[String: Any]])?.first?["unreadCount"] as? Int == 1)
            // Writing back reads what came before: Eero has nothing unread, and Olli has Eero's answer.
            let (answered, _) = try await client.call(
                .post, "\(path)/messages", token: eeroToken, body: ["id": UUID().uuidString, "text": "On my way"])
            #expect(answered == .created)
            for (token, unread) in [(eeroToken, 0), (olliToken, 1)] {
                let (_, list) = try await client.call(.get, "/v1/conversations", token: token)
                #expect((list["conversations"] as? [[String: Any]])?.first?["unreadCount"] as? Int == unread)
            }
        }
        let events = try await app.database.pool.query("SELECT type, payload::text AS payload FROM outbox ORDER BY seq")
            .map { (try $0.decode("type", as: String.self), try $0.decode("payload", as: String.self)) }
        #expect(
            events.map(\.0) == ["conversation.opened"] + Array(repeating: "message.sent", count: 5) + [
                "conversation.read", "message.sent",
            ])
        // The reader's other devices are told what is still unread: one message of Olli's after the fourth.
        let read = try #require(events.dropLast().last?.1)
        let readEvent = try JSONDecoder().decode(ConversationRead.self, from: Data(read.utf8))
        #expect(readEvent.unread == 1 && readEvent.recipients == [readEvent.userId])
    }

    @Test func aStrangerCannotReadOrWriteAndAClosedChatIsReadOnly() async throws {
        let app = try await ChatTestApp.make()
        let (olli, eero, mallory) = (UUID(), UUID(), UUID())
        let match = MatchOpened.between(orderer: olli, deliverer: eero)
        try await app.apply { try ConversationPostgresRepository.open(match, on: $0) }
        let path = "/v1/conversations/\(match.matchId)"
        let (olliToken, malloryToken) = (
            try await app.token(olli, name: "Olli"), try await app.token(mallory, name: "Mallory")
        )

        try await app.test { client in
            _ = try await client.call(
                .post, "\(path)/messages", token: olliToken, body: ["id": UUID().uuidString, "text": "secret"])
            let (peek, body) = try await client.call(.get, "\(path)/messages", token: malloryToken)
            let (write, _) = try await client.call(
                .post, "\(path)/messages", token: malloryToken, body: ["id": UUID().uuidString, "text": "hi"])
            let (_, list) = try await client.call(.get, "/v1/conversations", token: malloryToken)
            #expect(peek == .notFound && body["messages"] == nil)
            #expect(write == .notFound)
            #expect((list["conversations"] as? [Any])?.isEmpty == true)

            let (tooLong, problem) = try await client.call(
                .post, "\(path)/messages", token: olliToken,
                body: ["id": UUID().uuidString, "text": String(repeating: "x", count: 2001)])
            #expect(tooLong == .badRequest && problem["field"] as? String == "text")

            try await app.apply { try ConversationPostgresRepository.close(match.closed(version: 3), on: $0) }
            let (closed, _) = try await client.call(
                .post, "\(path)/messages", token: olliToken, body: ["id": UUID().uuidString, "text": "late"])
            let (_, afterClose) = try await client.call(.get, "/v1/conversations", token: olliToken)
            let (history, _) = try await client.call(.get, "\(path)/messages", token: olliToken)
            #expect(closed == .conflict)
            #expect((afterClose["conversations"] as? [Any])?.isEmpty == true)
            #expect(history == .ok)
        }
    }

    @Test func aMatchOpenedInMatchingOpensTheChatOverTheBroker() async throws {
        let app = try await ChatTestApp.make()
        let matching = try await TestDatabase.make(migrations: [PostgresMigrator.messagingDirectory])
        let match = MatchOpened.between(orderer: UUID(), deliverer: UUID())
        try await matching.pool.transaction { connection in
            try Outbox.append(match, on: connection)
            try Outbox.append(match, on: connection)
        }
        let relay = OutboxRelay(
            topology: Topology(service: "matching", publishes: [MatchOpened.type]), postgresURL: matching.url,
            amqpURL: app.broker.url, status: BrokerStatus(), logger: TestEnvironment.logger)
        let olliToken = try await app.token(match.members[0].userId, name: "Olli")

        try await app.test { client in
            // Chat has bound its queues by now; matching publishes from here on.
            try await runBriefly([relay]) {
                try await eventually("both copies taken and acknowledged by chat") {
                    try await client.consumedEvents(from: "chat.matching") == 2
                }
                let (_, list) = try await client.call(.get, "/v1/conversations", token: olliToken)
                #expect((list["conversations"] as? [Any])?.count == 1)
            }
        }
        let opened = try await app.database.pool.query(
            "SELECT count(*) AS n FROM outbox WHERE type = 'conversation.opened'"
        )
        .first?.decode("n", as: Int.self)
        #expect(opened == 1)
    }

    @Test func sendingIsRefusedWithRetryAfterWhileNotificationsIsBehindAndAcceptedOnceItCaughtUp() async throws {
        let app = try await ChatTestApp.make(environment: ["BACKLOG_LIMIT": "5"])
        // Notifications' queue of chat's events, with no notifications consuming it: what chat sends stays there.
        var feeds = EventHandlers()
        feeds.onEveryEvent(from: "chat") { _, _ in FinalStatement("SELECT 1") { _ in [] } }
        try Topology(service: "notifications", handlers: feeds).declare(amqpURL: app.broker.url)
        let (olli, eero) = (UUID(), UUID())
        let match = MatchOpened.between(orderer: olli, deliverer: eero)
        try await app.apply { try ConversationPostgresRepository.open(match, on: $0) }
        let token = try await app.token(olli, name: "Olli")
        let path = "/v1/conversations/\(match.matchId)/messages"

        try await app.test { client in
            func send(_ text: String) async throws -> Sent {
                try await sendMessage(text, to: path, token: token, client)
            }
            func backlog() async throws -> Int? { try await metric("event_backlog", client) }
            // The conversation's opening and two messages stay under the limit, even while an event being relayed is
            // counted both in the outbox and in the queue.
            for number in 1...2 { #expect(try await send("Viesti \(number)").0 == .created) }
            try await app.broker.publish(4, to: "notifications.chat")
            try await eventually("seven events waiting for notifications, measured") {
                try await backlog() ?? 0 >= 7
            }
            let refused = try await send("one too many")
            let (listed, _) = try await client.call(.get, "/v1/conversations", token: token)
            let metrics = try await client.execute(uri: "/metrics", method: .get) { String(buffer: $0.body) }

            #expect(refused.0 == .serviceUnavailable)
            #expect(refused.retryAfter == "1")
            #expect(refused.type == "/problems/busy")
            #expect(listed == .ok)
            #expect(metrics.contains("event_backlog_limit 5"))
            #expect(metrics.contains("requests_shed_total 1"))

            try await app.broker.purge("notifications.chat")
            try await eventually("the backlog measured again under the limit") { try await backlog() ?? 6 <= 5 }
            #expect(try await send("after the catch-up").0 == .created)
        }
        let stored = try await app.database.pool.query("SELECT text FROM messages").map {
            try $0.decode("text", as: String.self)
        }
        // What was refused changed nothing.
        #expect(stored.count == 3)
        #expect(!stored.contains("one too many"))
    }

    @Test func aSendBeyondTheChangesInFlightIsRefusedAtOnceAndTheOneInFlightIsStored() async throws {
        let app = try await ChatTestApp.make(environment: ["IN_FLIGHT_LIMIT": "1"])
        let (olli, eero) = (UUID(), UUID())
        let match = MatchOpened.between(orderer: olli, deliverer: eero)
        try await app.apply { try ConversationPostgresRepository.open(match, on: $0) }
        let token = try await app.token(olli, name: "Olli")
        let path = "/v1/conversations/\(match.matchId)/messages"
        // Messages cannot be stored while this transaction holds the table: the first send waits in front of its commit.
        let holder = try PostgresConnection(url: app.database.url)
        _ = try holder.query("BEGIN")
        _ = try holder.query("LOCK TABLE messages IN EXCLUSIVE MODE")

        try await app.test { client in
            func send(_ text: String) async throws -> Sent {
                try await sendMessage(text, to: path, token: token, client)
            }
            async let waiting = send("the first, held")
            let refused: Sent
            let listed: HTTPResponse.Status
            do {
                try await eventually("one send in flight") { try await metric("requests_in_flight", client) == 1 }
                refused = try await send("the second, at once")
                (listed, _) = try await client.call(.get, "/v1/conversations", token: token)
                _ = try holder.query("COMMIT")
            } catch {
                // NB: the held send is awaited on the way out, so the table is let go first.
                _ = try? holder.query("ROLLBACK")
                throw error
            }

            #expect(refused.0 == .serviceUnavailable)
            #expect(refused.retryAfter == "1")
            #expect(listed == .ok)
            #expect(try await waiting.0 == .created)
            #expect(try await metric("requests_in_flight", client) == 0)
            #expect(try await metric("requests_in_flight_limit", client) == 1)
            #expect(try await metric("requests_shed_total", client) == 1)
            #expect(try await send("the third, after").0 == .created)
        }
        let stored = try await app.database.pool.query("SELECT text FROM messages ORDER BY seq").map {
            try $0.decode("text", as: String.self)
        }
        #expect(stored == ["the first, held", "the third, after"])
    }
}
