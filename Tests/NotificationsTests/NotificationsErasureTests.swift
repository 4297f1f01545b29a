import Contracts
import Foundation
import Messaging
import Postgres
import TestSupport
import Testing

@testable import Notifications

// NB: the limit guards against a hang, not a speed: with every suite starting at once, a test here has waited
// two and a half minutes for the cores.
@Suite(.timeLimit(.minutes(5))) struct NotificationsErasureTests {
    @Test func aDeletedAccountsFeedAndDevicesGoAndOtherFeedsKeepNothingOfThemFromBefore() async throws {
        let app = try await NotificationsTestApp.make()
        let accounts = try await TestDatabase.make(migrations: [PostgresMigrator.messagingDirectory])
        let (ada, bob, cem, conversation) = (UUID(), UUID(), UUID(), UUID())
        let repository = FeedPostgresRepository(database: app.database.pool)
        let match = #"""
            {"recipients":["\#(ada)","\#(bob)"],"matchId":"\#(UUID())","members":[
                {"userId":"\#(ada)","name":"Ada Quill","bio":"counts in base 7"},
                {"userId":"\#(bob)","name":"Bob Stone","bio":"bakes"}]}
            """#
        try await app.database.pool.transaction { connection in
            try FeedPostgresRepository.setConversation(conversation, members: [ada, bob], isOpen: true, on: connection)
            _ = try Self.append(
                [
                    try Self.message(from: (ada, "Ada Quill"), to: bob, "see you at the library"),
                    try Self.message(from: (bob, "Bob Stone"), to: ada, "bring the notes, Ada"),
                    ReceivedEvent(type: "match.opened", body: Data(match.utf8)),
                    try Self.message(from: (cem, "Cem Oak"), to: bob, "lunch?"),
                ], on: connection)
        }
        _ = try await repository.registerDevice(
            userId: ada, platform: "apns", token: "ada-phone", p256dh: nil, auth: nil)
        _ = try await repository.registerDevice(
            userId: bob, platform: "fcm", token: "bob-phone", p256dh: nil, auth: nil)
        #expect(try await app.database.rowsContaining("Ada Quill").count == 3)
        try await accounts.pool.transaction { connection in
            try Outbox.append(UserDeleted(userId: ada, campus: "helsinki.fi"), on: connection)
        }
        let relay = OutboxRelay(
            topology: Topology(service: "accounts", publishes: [UserDeleted.type]), postgresURL: accounts.url,
            amqpURL: app.broker.url, status: BrokerStatus(), logger: TestEnvironment.logger)

        try await app.live { _, client in
            // Notifications has bound its queue of accounts by now; accounts publishes from here on.
            try await runBriefly([relay]) {
                try await eventually("user.deleted taken and acknowledged by notifications") {
                    try await client.consumedEvents(from: "notifications.accounts") == 1
                }
            }
        }
        let afterOnce = try await app.database.rowsContaining("")
        try await app.database.pool.transaction { connection in
            let handled = try FeedConsumer.handlers.apply(
                UserDeleted(userId: ada, campus: "helsinki.fi"), on: connection)
            #expect(handled)
        }
        #expect(try await app.database.rowsContaining("") == afterOnce)
        // An event of before the deletion, delayed behind it, makes no entry for her.
        let late = try await app.database.pool.transaction { connection in
            try Self.append(
                [try Self.message(from: (bob, "Bob Stone"), to: ada, "are you there?")], on: connection)
        }

        #expect(late.isEmpty)
        for trace in ["Ada Quill", "library", "base 7", "ada-phone", "are you there"] {
            #expect(try await app.database.rowsContaining(trace) == [], "\(trace)")
        }
        // Bob keeps what does not concern her; what quoted her went with her, leaving its seq (a feed has no gaps).
        let bobs = try await app.database.pool.query(
            "SELECT type, data::text AS data FROM feed WHERE user_id = \(bob) ORDER BY seq"
        ).map { (try $0.decode("type", as: String.self), try $0.decode("data", as: String.self)) }
        #expect(bobs.map(\.0) == [FeedEntry.removedType, FeedEntry.removedType, "message.sent"])
        #expect(bobs[0].1 == "{}" && bobs[1].1 == "{}")
        #expect(try Self.object(bobs[2].1)["text"] as? String == "lunch?")
        #expect(try await app.database.rowsContaining("bob-phone").count == 1)
        #expect(try await repository.otherMembers(of: conversation, besides: bob).isEmpty)
        // Her access token may outlive her account: it registers no device.
        #expect(
            try await repository.registerDevice(
                userId: ada, platform: "apns", token: "ada-new-phone", p256dh: nil, auth: nil) == nil)
    }

    private static func object(_ json: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    /// Appends the events' entries as the feed's consumer does, in the open transaction; returns the frames.
    private static func append(_ events: [ReceivedEvent], on connection: PostgresConnection) throws -> [LiveMessage] {
        let statement = try FeedConsumer.appendToFeeds(events)
        return try statement.live(try connection.query(statement.sql))
    }

    /// `message.sent` as chat publishes it.
    private static func message(from sender: (UUID, String), to recipient: UUID, _ text: String) throws
        -> ReceivedEvent
    {
        let event = MessageSent(
            messageId: UUID(), conversationId: UUID(), senderId: sender.0, senderName: sender.1,
            recipients: [recipient], text: text, sentAt: Date())
        return ReceivedEvent(type: MessageSent.type, body: try JSONEncoder().encode(event))
    }
}
