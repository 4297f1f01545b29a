import AsyncHTTPClient
import Foundation
import HummingbirdWSClient
import NIOConcurrencyHelpers
import TestSupport
import Testing

/// A socket held open while the test acts, collecting every frame it receives.
final class SocketRecorder: Sendable {
    private let frames = NIOLockedValueBox<[String]>([])
    private let task: Task<Void, any Error>

    init(port: Int, token: String, after: Int = 0) {
        let frames = self.frames
        task = Task {
            try await WebSocketClient.connect(
                url: "ws://127.0.0.1:\(port)/v1/stream?after=\(after)&access_token=\(token)",
                logger: TestEnvironment.logger
            ) { inbound, _, _ in
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    // NB: not the frame that says the replay is done (NotificationsTests checks it).
                    guard case .text(let text) = message, !text.isLiveFrame else { continue }
                    frames.withLockedValue { $0.append(text) }
                }
            }
        }
    }

    var received: [[String: Any]] {
        frames.withLockedValue { $0 }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// Waits until a frame satisfies `condition` and returns it; throws, naming `what` it waited for, when none
    /// comes within `timeout` seconds.
    @discardableResult
    func wait(_ what: String, timeout: Double = 20, for condition: @escaping ([String: Any]) -> Bool) async throws
        -> [String: Any]
    {
        var found: [String: Any]?
        try await eventually(what, timeout: timeout) {
            found = self.received.first(where: condition)
            return found != nil
        }
        return found!
    }

    func close() async {
        task.cancel()
        _ = try? await task.value
    }
}

@Suite(.serialized, .timeLimit(.minutes(5))) struct ChatAndNotificationsTests {
    @Test func aDeliveryChatReachesEachSideLiveAndAReconnectMissesNothing() async throws {
        let system = try await RunningSystem()
        do {
            try await story(system)
        } catch {
            try await system.stop()
            throw error
        }
        try await system.stop()
    }

    @Test func studentsOnTwoNotificationsProcessesHearEachOtherLive() async throws {
        let system = try await RunningSystem()
        do {
            try await twoReplicas(system)
        } catch {
            try await system.stop()
            throw error
        }
        try await system.stop()
    }

    private func twoReplicas(_ system: RunningSystem) async throws {
        try await system.start("chat")
        try await system.start("notifications")
        try await system.start("notifications", name: "notifications-2", databaseOf: "notifications")
        let (olli, eero) = (UUID(), UUID())
        let (olliToken, eeroToken) = (
            try await system.token(olli, name: "Olli"), try await system.token(eero, name: "Eero")
        )
        let olliSocket = SocketRecorder(port: system.ports["notifications"]!, token: olliToken)
        let eeroSocket = SocketRecorder(port: system.ports["notifications-2"]!, token: eeroToken)
        // A match accepted in matching, as chat receives it: published here through a producer's outbox.
        let matchId = try await system.acceptMatch(orderer: olli, deliverer: eero)
        let chat = "/v1/conversations/\(matchId)"
        // NB: a request that times out on a busy machine is tried again, not the end of the wait.
        try await eventually("the match's chat open", timeout: 60) {
            (try? await system.request(.GET, "chat", "\(chat)/messages", token: olliToken).status) == 200
        }

        _ = try await system.request(
            .POST, "chat", "\(chat)/messages", token: olliToken, body: ["id": UUID().uuidString, "text": "to Eero"])
        _ = try await system.request(
            .POST, "chat", "\(chat)/messages", token: eeroToken, body: ["id": UUID().uuidString, "text": "to Olli"])

        func text(_ frame: [String: Any]) -> String? { (frame["data"] as? [String: Any])?["text"] as? String }
        try await eeroSocket.wait("Olli's message at Eero") { text($0) == "to Eero" }
        try await olliSocket.wait("Eero's message at Olli") { text($0) == "to Olli" }
        await olliSocket.close()
        await eeroSocket.close()
    }

    private func story(_ system: RunningSystem) async throws {
        for service in ["places", "matching", "chat", "notifications"] { try await system.start(service) }
        try await system.run(
            "places",
            ["import", RunningSystem.repositoryRoot.appendingPathComponent("data/helsinki-centre-places.geojson").path])
        let (olli, eero, mallory) = (UUID(), UUID(), UUID())
        let (olliToken, eeroToken, malloryToken) = (
            try await system.token(olli, name: "Olli"), try await system.token(eero, name: "Eero"),
            try await system.token(mallory, name: "Mallory")
        )
        func placeId(_ query: String, kind: String) async throws -> String {
            let answer = try await system.request(
                .GET, "places", "/v1/places?q=\(query)&kind=\(kind)&limit=1", token: olliToken)
            return try #require((answer.json["places"] as? [[String: Any]])?.first?["id"] as? String)
        }
        let restaurant = try await placeId("unicafe%20metsatalo", kind: "restaurant")
        let porthania = try await placeId("porthania", kind: "building")
        let notifications = system.ports["notifications"]!
        let eeroSocket = SocketRecorder(port: notifications, token: eeroToken)
        let olliSocket = SocketRecorder(port: notifications, token: olliToken)
        let mallorySocket = SocketRecorder(port: notifications, token: malloryToken)
        // The imported places reach matching through places' events: until then the restaurant is unknown (404). A
        // request that times out is tried again with the run's id, which returns the run it may have opened.
        let runId = UUID().uuidString
        try await eventually("Eero's run open at the imported restaurant", timeout: 60) {
            (try? await system.request(
                .POST, "matching", "/v1/runs", token: eeroToken,
                body: ["id": runId, "restaurantId": restaurant, "destinationId": porthania]
            ).status) == 201
        }
        let ordered = try await system.request(
            .POST, "matching", "/v1/orders", token: olliToken,
            body: ["restaurantId": restaurant, "destinationId": porthania, "items": "Lunch"])
        #expect(ordered.status == 201)

        let offer = try await eeroSocket.wait("the offer at Eero") { $0["type"] as? String == "offer.made" }
        let offerId = try #require((offer["data"] as? [String: Any])?["offerId"] as? String)
        let accepted = try await system.request(.POST, "matching", "/v1/offers/\(offerId)/accept", token: eeroToken)
        let matchId = try #require(accepted.json["id"] as? String)
        try await olliSocket.wait("match.accepted at Olli") { $0["type"] as? String == "match.accepted" }
        try await olliSocket.wait("conversation.opened at Olli") { $0["type"] as? String == "conversation.opened" }
        try await eeroSocket.wait("conversation.opened at Eero") { $0["type"] as? String == "conversation.opened" }

        let chat = "/v1/conversations/\(matchId)"
        let hello = try await system.request(
            .POST, "chat", "\(chat)/messages", token: eeroToken,
            body: ["id": UUID().uuidString, "text": "Hei, I have your lunch"])
        #expect(hello.status == 201)
        try await olliSocket.wait("Eero's message live at Olli") {
            $0["type"] as? String == "message.sent"
                && ($0["data"] as? [String: Any])?["text"] as? String == "Hei, I have your lunch"
        }

        // Olli's socket closes; three messages and two updates of the match happen meanwhile.
        let lastSeen = try #require(olliSocket.received.compactMap { $0["seq"] as? Int }.max())
        await olliSocket.close()
        for text in ["At the door", "Floor 2?", "Coming up"] {
            _ = try await system.request(
                .POST, "chat", "\(chat)/messages", token: eeroToken, body: ["id": UUID().uuidString, "text": text])
        }
        _ = try await system.request(.POST, "matching", "/v1/matches/\(matchId)/complete", token: olliToken)
        _ = try await system.request(.POST, "matching", "/v1/matches/\(matchId)/complete", token: eeroToken)
        try await eeroSocket.wait("conversation.closed at Eero") { $0["type"] as? String == "conversation.closed" }
        let reconnected = SocketRecorder(port: notifications, token: olliToken, after: lastSeen)
        try await eventually("the five entries Olli missed") { reconnected.received.count { $0["seq"] != nil } >= 5 }
        let missed = reconnected.received
        await reconnected.close()

        #expect(missed.compactMap { $0["seq"] as? Int } == Array((lastSeen + 1)...(lastSeen + 5)))
        // Each producer's events keep their order; chat's and matching's may interleave either way.
        let types = missed.compactMap { $0["type"] as? String }
        #expect(
            types.filter { $0 != "match.completed" } == [
                "message.sent", "message.sent", "message.sent", "conversation.closed",
            ])
        #expect(types.filter { $0 == "match.completed" }.count == 1)
        let peek = try await system.request(.GET, "chat", "\(chat)/messages", token: malloryToken)
        #expect(peek.status == 404)
        #expect(mallorySocket.received.isEmpty)
        await mallorySocket.close()
        await eeroSocket.close()
        for token in [olliToken, eeroToken] {
            let list = try await system.request(.GET, "chat", "/v1/conversations", token: token)
            #expect((list.json["conversations"] as? [Any])?.isEmpty == true)
        }
        let late = try await system.request(
            .POST, "chat", "\(chat)/messages", token: olliToken, body: ["id": UUID().uuidString, "text": "Thanks!"])
        #expect(late.status == 409)
    }
}
