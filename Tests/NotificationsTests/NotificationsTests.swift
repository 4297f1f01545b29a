import Contracts
import Duets
import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWSClient
import Logging
import Messaging
import NIOConcurrencyHelpers
import Postgres
import ServiceKit
import ServiceLifecycle
import TestSupport
import Testing

@testable import Notifications

/// The real notifications application on a fresh database and vhost (or, `sharing` another, a second replica), and
/// a chat producer of its own whose events it consumes.
struct NotificationsTestApp: ServiceTestApp {
    let service: TestService
    /// The outbox from which `append` publishes, as chat would.
    let chat: TestDatabase

    static func make(sharing other: NotificationsTestApp? = nil) async throws -> NotificationsTestApp {
        NotificationsTestApp(
            service: try await TestService.make(
                "notifications", migrations: ["Services/Notifications/Migrations"],
                environment: ["POSTGRES_POOL_SIZE": "3", "PUSH_GRACE_SECONDS": "600"], sharing: other?.service),
            chat: try await TestDatabase.make(migrations: [PostgresMigrator.messagingDirectory]))
    }

    /// Runs the application on a real port, with the relay of `chat`'s outbox.
    func live(
        pushSender: (any PushSender)? = nil,
        _ body: @escaping @Sendable (Int, any TestClientProtocol) async throws -> Void
    ) async throws {
        let app = try await buildApplication(
            service.configuration, logger: TestEnvironment.logger, pushSender: pushSender)
        let relay = OutboxRelay(
            topology: Topology(service: "chat", publishes: ["message.sent", "match.accepted", "match.completed"]),
            postgresURL: chat.url, amqpURL: service.broker.url, status: BrokerStatus(), logger: TestEnvironment.logger)
        try await app.test(.live) { client in
            try await runBriefly([relay]) { try await body(client.port!, client) }
        }
    }

    /// Publishes an event for `userId` as chat does, which notifications' consumer appends to their feed.
    func append(to userId: UUID, type: String = "message.sent", text: String) async throws {
        try await chat.pool.transaction { connection in
            try Outbox.append(
                json: JSONText(raw: #"{"recipients":["\#(userId.uuidString)"],"text":"\#(text)"}"#), type: type,
                aggregateId: userId, version: 1, on: connection)
        }
    }

    /// Returns once a replica has bound the user's live key, as it does when a socket of theirs opens: from then on
    /// what is appended to their feed reaches the socket live rather than from its replay.
    func waitForLiveSocket(of userId: UUID) async throws {
        let (exchange, key) = ("\(FeedRouting.liveExchange) -> ", ": \(FeedRouting.liveKey(userId))")
        try await eventually("a socket of \(userId) live") {
            try await service.broker.bindings().contains { $0.hasPrefix(exchange) && $0.hasSuffix(key) }
        }
    }
}

/// A socket client that collects frames.
enum StreamClient {
    /// Connects to the stream and returns the first `count` frames, then waits `quiet` seconds to catch extras;
    /// throws when `count` frames have not come `timeout` seconds after `action`. Frames are also collected in
    /// `received` as they arrive, for a caller that acts on them meanwhile: `action` runs as soon as the socket is
    /// open (a caller that needs it live waits for that itself). The frame that says the replay is done
    /// (`stream.live`) is left out unless `keepLive`.
    static func frames(
        port: Int, token: String, after: Int64 = 0, count: Int, quiet: Double = 0.5, timeout: Double = 60,
        keepLive: Bool = false,
        into received: NIOLockedValueBox<[String]> = .init([]),
        whileOpen action: (@Sendable (WebSocketOutboundWriter) async throws -> Void)? = nil
    ) async throws -> [[String: Any]] {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)/v1/stream?after=\(after)&access_token=\(token)",
                    logger: TestEnvironment.logger
                ) { inbound, outbound, _ in
                    try await withThrowingTaskGroup(of: Void.self) { inner in
                        inner.addTask {
                            for try await message in inbound.messages(maxSize: 1 << 20) {
                                guard case .text(let text) = message, keepLive || !text.isLiveFrame else { continue }
                                received.withLockedValue { $0.append(text) }
                            }
                        }
                        inner.addTask {
                            try await action?(outbound)
                            // NB: the wait starts after `action`, which may itself wait long on a busy machine.
                            try await eventually("\(count) frames on the socket", timeout: timeout) {
                                received.withLockedValue { $0.count } >= count
                            }
                            // NB: not a wait for a condition: the quiet time in which no frame past `count` may come.
                            try await Task.sleep(for: .milliseconds(Int(quiet * 1000)))
                        }
                        try await inner.next()
                        inner.cancelAll()
                    }
                }
            }
            try await group.waitForAll()
        }
        let texts = received.withLockedValue { $0 }
        guard texts.count >= count else {
            throw TestFailure("the socket closed after \(texts.count) of \(count) frames")
        }
        return texts.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }
}

// NB: the limit guards against a hang, not a speed: with every suite starting at once, a test here has waited
// two and a half minutes for the cores.
@Suite(.timeLimit(.minutes(5))) struct NotificationsTests {
    @Test func aFramesSeqIsReadFromItsStartAndAHintHasNone() {
        let frame = FeedEntry.frame(seq: 4_812, type: "message.sent", at: Date(), dataJSON: #"{"text":"{\"seq\":1}"}"#)
        let hint = #"{"type":"typing","data":{"seq":7}}"#

        #expect(FeedEntry.seq(ofFrame: Data(frame.utf8)) == 4_812)
        #expect(FeedEntry.seq(ofFrame: Data(hint.utf8)) == nil)
    }

    @Test func onlyTheConcernedUsersHearOfAnEvent() throws {
        let (singer, partner, stranger) = (UUID(), UUID(), UUID())
        let paired = DuetPaired(duetId: UUID(), song: "Kesäillan valssi", recipients: [partner])
        let message = MessageSent(
            messageId: UUID(), conversationId: UUID(), senderId: singer, senderName: "Olli", recipients: [partner],
            text: "Hi", sentAt: Date())
        let ended = DuetEnded(duetId: paired.duetId, recipients: [singer])
        let read = ConversationRead(conversationId: UUID(), userId: partner, unread: 0, version: 1)

        /// What notifications reads of any event: the `recipients` of its JSON.
        func recipients(of event: any Event) throws -> [UUID] {
            struct Addressed: Decodable { var recipients: [UUID] }
            return try JSONDecoder().decode(Addressed.self, from: try JSONEncoder().encode(event)).recipients
        }

        #expect(try recipients(of: paired) == [partner])
        #expect(try recipients(of: message) == [partner])
        #expect(try recipients(of: ended) == [singer])
        #expect(try recipients(of: read) == [partner])
        let events: [any Event] = [paired, message, ended, read]
        let everyone = try events.flatMap { try recipients(of: $0) }
        #expect(!everyone.contains(stranger))
    }

    @Test func aMessageWithAQuoteAMarkFollowsReachesTheFeedWhole() async throws {
        let app = try await NotificationsTestApp.make()
        let student = UUID()
        // A quote and a backslash, each with a combining mark: in the event's JSON, one character after its escape.
        let text = "\"\u{301} and \\\u{308}"
        let escaped = #"\""# + "\u{301} and " + #"\\"# + "\u{308}"

        try await app.live { _, _ in
            try await app.append(to: student, text: escaped)
            try await eventually("the message in the student's feed") {
                try await !app.database.pool.query("SELECT 1 FROM feed WHERE user_id = \(student)").isEmpty
            }
        }
        let stored = try await app.database.pool.query(
            "SELECT data->>'text' AS text FROM feed WHERE user_id = \(student)")

        #expect(try stored.map { try $0.decode("text", as: String.self) } == [text])
    }

    @Test func aReconnectingStudentGetsExactlyWhatTheyMissedInOrder() async throws {
        let app = try await NotificationsTestApp.make()
        let student = UUID()
        let token = try await app.token(student)

        try await app.live { port, client in
            let first = try await StreamClient.frames(port: port, token: token, count: 2) { _ in
                try await app.waitForLiveSocket(of: student)
                try await app.append(to: student, text: "one")
                try await app.append(to: student, text: "two")
            }
            #expect(first.compactMap { $0["seq"] as? Int } == [1, 2])

            // The socket is closed: three messages and two match updates happen meanwhile.
            for text in ["three", "four", "five"] { try await app.append(to: student, text: text) }
            try await app.append(to: student, type: "match.accepted", text: "accepted")
            try await app.append(to: student, type: "match.completed", text: "completed")
            let missed = try await StreamClient.frames(
                port: port, token: token, after: 2, count: 6, quiet: 1, keepLive: true)

            #expect(missed.compactMap { $0["seq"] as? Int } == [3, 4, 5, 6, 7])
            let entries = missed.filter { $0["seq"] != nil }
            #expect(entries.compactMap { $0["type"] as? String }.suffix(2) == ["match.accepted", "match.completed"])
            // Once the replay is done the socket says so, with the last seq it replayed (an entry stored meanwhile
            // may follow it live).
            let live = try #require(missed.firstIndex { $0["type"] as? String == "stream.live" })
            let replayed = missed[..<live].compactMap { $0["seq"] as? Int }
            #expect((missed[live]["data"] as? [String: Any])?["seq"] as? Int == replayed.last ?? 2)
            let (status, polled) = try await client.execute(
                uri: "/v1/notifications?after=5", method: .get, headers: [.authorization: "Bearer \(token)"]
            ) {
                (
                    $0.status,
                    (try? JSONSerialization.jsonObject(with: Data($0.body.readableBytesView))) as? [String: Any]
                )
            }
            #expect(status == .ok)
            #expect((polled?["entries"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } == [6, 7])
        }
    }

    @Test func aSocketWithoutAValidTokenIsRefusedBeforeTheUpgrade() async throws {
        let app = try await NotificationsTestApp.make()
        let token = try await app.token(UUID())

        try await app.live { port, client in
            let missing = try await client.execute(uri: "/v1/stream", method: .get) { $0.status }
            let forged = try await client.execute(uri: "/v1/stream?access_token=nonsense", method: .get) { $0.status }
            let plain = try await client.execute(uri: "/v1/stream?access_token=\(token)", method: .get) { $0.status }
            await #expect(throws: (any Error).self) {
                try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)/v1/stream?access_token=nonsense", logger: TestEnvironment.logger
                ) { _, _, _ in }
            }
            #expect(missing == .unauthorized)
            #expect(forged == .unauthorized)
            #expect(plain == .upgradeRequired)
        }
    }

    @Test func studentsOnDifferentReplicasReachEachOtherLiveAndTyping() async throws {
        let first = try await NotificationsTestApp.make()
        let second = try await NotificationsTestApp.make(sharing: first)
        let (aino, eero) = (UUID(), UUID())
        let conversation = UUID()
        try await first.database.pool.transaction { connection in
            try FeedPostgresRepository.setConversation(
                conversation, members: [aino, eero], isOpen: true, on: connection)
        }
        let (ainoToken, eeroToken) = (try await first.token(aino), try await first.token(eero))

        try await first.live { firstPort, _ in
            try await second.live { secondPort, _ in
                let seenByEero = NIOLockedValueBox<[String]>([])
                async let eeroFrames = StreamClient.frames(
                    port: secondPort, token: eeroToken, count: 2, quiet: 0.5, into: seenByEero)
                _ = try await StreamClient.frames(port: firstPort, token: ainoToken, count: 0, quiet: 0) { socket in
                    try await first.append(to: eero, text: "from Aino")
                    // Once Eero holds the entry his socket is bound on the second replica; a typing client repeats
                    // its hint (it is not stored), so Aino types until Eero hears it.
                    try await eventually("the entry at Eero", timeout: 30) {
                        seenByEero.withLockedValue { $0.count } >= 1
                    }
                    try await eventually("Aino's typing heard by Eero") {
                        try await socket.write(
                            .text(#"{"type":"typing","conversationId":"\#(conversation.uuidString)"}"#))
                        // NB: not a wait for a condition: the pace at which a typing client repeats its hint.
                        try await Task.sleep(for: .milliseconds(300))
                        return seenByEero.withLockedValue { $0.count } >= 2
                    }
                }
                let received = try await eeroFrames
                let entries = received.filter { $0["seq"] != nil }
                let hints = received.filter { $0["type"] as? String == "typing" }

                #expect(entries.count == 1)
                #expect(entries.first?["seq"] as? Int == 1)
                #expect((entries.first?["data"] as? [String: Any])?["text"] as? String == "from Aino")
                #expect(!hints.isEmpty)
                #expect(hints.allSatisfy { $0["seq"] == nil })
            }
        }
    }

    @Test func theSameEventDeliveredTwiceMakesOneEntry() async throws {
        let app = try await NotificationsTestApp.make()
        let matching = try await TestDatabase.make(migrations: [PostgresMigrator.messagingDirectory])
        let partner = UUID()
        let paired = DuetPaired(duetId: UUID(), song: "Kesäillan valssi", recipients: [partner])
        try await matching.pool.transaction { try Outbox.append(paired, on: $0) }
        let relay = OutboxRelay(
            topology: Topology(service: "matching", publishes: [DuetPaired.type]), postgresURL: matching.url,
            amqpURL: app.broker.url, status: BrokerStatus(), logger: TestEnvironment.logger)

        try await app.live { _, client in
            // Notifications has bound its queues by now; matching publishes from here on.
            try await runBriefly([relay]) {
                // NB: the row is reset only once the relay has marked it sent, or the relay would mark it sent again.
                try await eventually("the pairing in the feed and its outbox row sent") {
                    guard try await app.database.pool.query("SELECT 1 FROM feed").count == 1 else { return false }
                    return try await matching.pool.query("SELECT 1 FROM outbox_unsent").isEmpty
                }
                // The relay publishes the same row, with the same message id, once more.
                try await matching.pool.query("INSERT INTO outbox_unsent SELECT seq FROM outbox")
                try await eventually("the second copy taken and acknowledged by notifications") {
                    try await client.consumedEvents(from: "notifications.matching") == 2
                }
            }
        }
        let entries = try await app.database.pool.query("SELECT user_id, seq, type FROM feed")

        #expect(entries.count == 1)
        #expect(try entries.first?.decode("user_id", as: UUID.self) == partner)
        #expect(try entries.first?.decode("type", as: String.self) == "duet.paired")
    }

    @Test func aMalformedFieldThePlatformDoesNotUseIsRefusedAndNothingRegistered() async throws {
        let app = try await NotificationsTestApp.make()
        let token = try await app.token(UUID())
        let endpoint = String(repeating: "%", count: 2049)
        try await app.live(pushSender: RecordingPushSender()) { _, client in
            for body in [
                #"{"platform":"apns","token":"device-a","subscription":{"endpoint":"\#(endpoint)","keys":{"p256dh":"k","auth":"a"}}}"#,
                #"{"platform":"fcm","token":"device-b","subscription":{"endpoint":"\#(endpoint)","keys":{"p256dh":"k","auth":"a"}}}"#,
            ] {
                let status = try await client.execute(
                    uri: "/v1/devices", method: .post,
                    headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                    body: ByteBuffer(string: body)
                ) { $0.status }
                #expect(status == .badRequest)
            }
        }
        #expect(try await app.database.pool.query("SELECT 1 FROM devices").isEmpty)
    }

    @Test func anEntryNoSocketTookIsPushedOnceToTheDevicesOfItsUser() async throws {
        let app = try await NotificationsTestApp.make()
        let (offline, online, deviceless) = (UUID(), UUID(), UUID())
        let (offlineToken, onlineToken) = (try await app.token(offline), try await app.token(online))
        let sender = RecordingPushSender()

        try await app.live(pushSender: sender) { port, client in
            for (token, device) in [(offlineToken, "device-a"), (offlineToken, "device-b"), (onlineToken, "device-c")] {
                let status = try await client.execute(
                    uri: "/v1/devices", method: .post,
                    headers: [.authorization: "Bearer \(token)", .contentType: "application/json"],
                    body: ByteBuffer(string: #"{"token":"\#(device)","platform":"apns"}"#)
                ) { $0.status }
                #expect(status == .created)
            }
            _ = try await StreamClient.frames(port: port, token: onlineToken, count: 1, quiet: 2) { _ in
                try await app.waitForLiveSocket(of: online)
                try await app.append(to: online, text: "seen live")
                try await app.append(to: offline, text: "nobody listening")
                try await app.append(to: deviceless, text: "nowhere to push")
            }
            // NB: the test keeps the clock: the grace period is ten minutes, so nothing is pushed before the online
            // entry is marked delivered however busy the machine; then every entry is made older than the grace.
            try await eventually("all three entries in a feed and the online one marked delivered", timeout: 60) {
                guard try await app.database.pool.query("SELECT 1 FROM feed").count == 3 else { return false }
                return try await app.database.pool.query(
                    "SELECT 1 FROM feed_awaiting_push WHERE user_id = \(online)"
                ).isEmpty
            }
            try await app.database.pool.query(
                "UPDATE feed_awaiting_push SET created_at = created_at - interval '600 seconds'")
            try await eventually("two entries pushed and none awaiting a push", timeout: 60) {
                guard sender.sent.withLockedValue({ $0.count }) == 2 else { return false }
                return try await app.database.pool.query("SELECT 1 FROM feed_awaiting_push").isEmpty
            }
            // NB: not a wait for a condition: two rounds of the dispatcher more, in which no entry may be pushed again.
            try await Task.sleep(for: .seconds(2))
        }
        let feeds = try await app.database.pool.query("SELECT user_id FROM feed").map {
            try $0.decode("user_id", as: UUID.self)
        }

        // The entry seen live is not pushed, and the one of the user without a device is settled without a push, so
        // that it is not looked at again; each stays in its feed.
        #expect(Set(feeds) == [online, offline, deviceless] && feeds.count == 3)
        #expect(sender.sent.withLockedValue { $0 }.sorted() == ["device-a 1", "device-b 1"])
    }
}

extension NotificationsTests {
    @Test func onlyAMessageOrAnEntryWithANoticeWaitsForAPush() async throws {
        let app = try await NotificationsTestApp.make()
        let user = UUID()

        try await app.live { _, _ in
            try await app.append(to: user, type: "thing.happened", text: "nothing to tell")
            try await app.append(to: user, text: "a message")
            try await app.chat.pool.transaction { connection in
                try Outbox.append(
                    json: JSONText(
                        raw: #"{"recipients":["\#(user.uuidString)"],"notice":{"title":"Told","body":"of this"}}"#),
                    type: "thing.told", aggregateId: user, version: 1, on: connection)
            }
            try await eventually("three entries in the feed", timeout: 60) {
                try await app.database.pool.query("SELECT 1 FROM feed").count == 3
            }
        }
        let awaiting = try await app.database.pool.query(
            "SELECT f.type FROM feed_awaiting_push a JOIN feed f USING (user_id, seq) ORDER BY f.seq"
        ).map { try $0.decode("type", as: String.self) }

        #expect(awaiting == ["message.sent", "thing.told"])
    }
}

/// Remembers each push as "token seq".
final class RecordingPushSender: PushSender {
    let sent = NIOLockedValueBox<[String]>([])

    func send(_ message: PushMessage, to device: PushDevice) async -> PushOutcome {
        sent.withLockedValue { $0.append("\(device.token) \(message.seq)") }
        return .sent
    }
}
