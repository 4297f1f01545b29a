import Duets
import Foundation
import MatchingCore
import ServiceLifecycle
import TestSupport
import Testing

@testable import Matching

/// A new flow is a folder (Tests/Duets: its routes, events, tables and OpenAPI part) and one line in the list of
/// flows matching is given; it needs nothing of chat and notifications but the generic match events and its events'
/// recipients.
@Suite(.serialized, .timeLimit(.minutes(5))) struct FourthFlowTests {
    @Test func aFlowAddedAsAFolderAndOneLineGetsAChatLiveMessagesFeedEntriesAndItsClosing() async throws {
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

        // The one line: matching with its flows and the duets.
        let matching = try await system.serve("matching") { configuration in
            try await buildMatchingApplication(
                configuration, logger: TestEnvironment.logger, flows: matchingFlows + [DuetsFlow.self])
        }
        let duet = try await system.request(
            .POST, "matching", "/v1/duets", token: ainoToken,
            body: ["partnerId": veli.uuidString, "partnerName": "Veli", "song": "Myrskyn jälkeen"])
        let duetId = try #require((duet.json["id"] as? String).flatMap(UUID.init(uuidString:)))
        let paired = try await veliSocket.wait("duet.paired for Veli") { $0["type"] as? String == "duet.paired" }
        try await eventually("chat to list the duet's conversation", timeout: 20) {
            let list = try await system.request(.GET, "chat", "/v1/conversations", token: ainoToken).json
            return (list["conversations"] as? [[String: Any]])?.first?["subject"] as? String == "Myrskyn jälkeen"
        }
        let conversations = try await system.request(.GET, "chat", "/v1/conversations", token: ainoToken).json
        let conversation = try #require((conversations["conversations"] as? [[String: Any]])?.first)
        let chat = "/v1/conversations/\(duetId)"
        _ = try await system.request(
            .POST, "chat", "\(chat)/messages", token: ainoToken, body: ["id": UUID().uuidString, "text": "Sävellaji?"])
        _ = try await veliSocket.wait("Aino's message for Veli") {
            ($0["data"] as? [String: Any])?["text"] as? String == "Sävellaji?"
        }
        let strangersRead = try await system.request(.GET, "chat", "\(chat)/messages", token: strangerToken).status

        let end = try await system.request(.DELETE, "matching", "/v1/duets/\(duetId)", token: veliToken)
        try await ainoSocket.wait("duet.ended for Aino") { $0["type"] as? String == "duet.ended" }
        try await ainoSocket.wait("the conversation closed for Aino") { $0["type"] as? String == "conversation.closed" }
        let afterClose = try await system.request(
            .POST, "chat", "\(chat)/messages", token: veliToken, body: ["id": UUID().uuidString, "text": "Vielä?"])
        let listAfter = try await system.request(.GET, "chat", "/v1/conversations", token: veliToken).json

        #expect((paired["data"] as? [String: Any])?["song"] as? String == "Myrskyn jälkeen")
        #expect((paired["data"] as? [String: Any])?["recipients"] == nil)
        #expect(conversation["flow"] as? String == "duets")
        #expect((conversation["otherMembers"] as? [[String: Any]])?.map { $0["role"] as? String } == ["bass"])
        #expect(strangersRead == 404)
        #expect(duet.status == 201 && end.status == 204)
        #expect(afterClose.status == 409)
        #expect((listAfter["conversations"] as? [Any])?.isEmpty == true)
        #expect(!strangerSocket.received.contains { $0["type"] as? String == "duet.paired" })
        await matching.triggerGracefulShutdown()
        await ainoSocket.close()
        await veliSocket.close()
        await strangerSocket.close()
    }
}
