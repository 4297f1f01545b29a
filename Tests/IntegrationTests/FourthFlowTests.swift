import Contracts
import Foundation
import Testing
import TestSupport

/// A flow that exists only here: two students paired for a duet. It publishes what every flow publishes, the
/// generic match events, and an event of its own that names its recipients.
struct DuetPaired: Event {
    static let type = "duet.paired"
    var duetId: UUID
    var song: String
    var recipients: [UUID]
    var version: Int64 = 1
    var aggregateId: UUID { duetId }
}

struct DuetEnded: Event {
    static let type = "duet.ended"
    var duetId: UUID
    var recipients: [UUID]
    var version: Int64 = 2
    var aggregateId: UUID { duetId }
}

/// A new flow needs nothing of chat and notifications but the generic match events and its events' recipients.
@Suite(.serialized, .timeLimit(.minutes(5))) struct FourthFlowTests {
    @Test func aFlowChatAndNotificationsNeverHeardOfGetsAChatLiveMessagesFeedEntriesAndItsClosing() async throws {
        let system = try await RunningSystem()
        do {
            try await duet(system)
        } catch {
            try await system.stop()
            throw error
        }
        try await system.stop()
    }

    private func duet(_ system: RunningSystem) async throws {
        try await system.start("chat")
        try await system.start("notifications")
        let (aino, veli, stranger) = (UUID(), UUID(), UUID())
        let ainoToken = try await system.token(aino, name: "Aino")
        let veliToken = try await system.token(veli, name: "Veli")
        let strangerToken = try await system.token(stranger, name: "Stranger")
        let port = system.ports["notifications"]!
        let ainoSocket = SocketRecorder(port: port, token: ainoToken)
        let veliSocket = SocketRecorder(port: port, token: veliToken)
        let strangerSocket = SocketRecorder(port: port, token: strangerToken)
        let duetId = UUID()

        try await system.publish(
            [
                DuetPaired(duetId: duetId, song: "Myrskyn jälkeen", recipients: [aino, veli]),
                MatchOpened(
                    matchId: duetId, flow: "duets", campus: "helsinki.fi",
                    members: [
                        MatchMember(userId: aino, name: "Aino", role: "soprano"),
                        MatchMember(userId: veli, name: "Veli", role: "bass"),
                    ],
                    subject: "Myrskyn jälkeen", version: 1),
            ], as: "matching")
        let paired = try await veliSocket.wait { $0["type"] as? String == "duet.paired" }
        let listed = try await eventually(timeout: 20) {
            let list = try await system.request(.GET, "chat", "/v1/conversations", token: ainoToken).json
            return (list["conversations"] as? [[String: Any]])?.first?["subject"] as? String == "Myrskyn jälkeen"
        }
        let conversations = try await system.request(.GET, "chat", "/v1/conversations", token: ainoToken).json
        let conversation = try #require((conversations["conversations"] as? [[String: Any]])?.first)
        let chat = "/v1/conversations/\(duetId)"
        _ = try await system.request(
            .POST, "chat", "\(chat)/messages", token: ainoToken, body: ["id": UUID().uuidString, "text": "Sävellaji?"])
        let message = try await veliSocket.wait { ($0["data"] as? [String: Any])?["text"] as? String == "Sävellaji?" }
        let strangersRead = try await system.request(.GET, "chat", "\(chat)/messages", token: strangerToken).status

        try await system.publish(
            [
                DuetEnded(duetId: duetId, recipients: [aino, veli]),
                MatchClosed(matchId: duetId, flow: "duets", reason: "completed", memberIds: [aino, veli], version: 2),
            ], as: "matching")
        let ended = try await ainoSocket.wait { $0["type"] as? String == "duet.ended" }
        let closed = try await ainoSocket.wait { $0["type"] as? String == "conversation.closed" }
        let afterClose = try await system.request(
            .POST, "chat", "\(chat)/messages", token: veliToken, body: ["id": UUID().uuidString, "text": "Vielä?"])
        let listAfter = try await system.request(.GET, "chat", "/v1/conversations", token: veliToken).json

        #expect((paired?["data"] as? [String: Any])?["song"] as? String == "Myrskyn jälkeen")
        #expect((paired?["data"] as? [String: Any])?["recipients"] == nil)
        #expect(listed)
        #expect(conversation["flow"] as? String == "duets")
        #expect((conversation["otherMembers"] as? [[String: Any]])?.map { $0["role"] as? String } == ["bass"])
        #expect(message != nil)
        #expect(strangersRead == 404)
        #expect(ended != nil && closed != nil)
        #expect(afterClose.status == 409)
        #expect((listAfter["conversations"] as? [Any])?.isEmpty == true)
        #expect(!strangerSocket.received.contains { $0["type"] as? String == "duet.paired" })
        await ainoSocket.close()
        await veliSocket.close()
        await strangerSocket.close()
    }
}
