import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import Messaging
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import Chat

/// Calls on a real PostgreSQL and RabbitMQ through chat's API: who may call whom, one call at a time, the ring's
/// time, signals between the parties only, and what a closing match and a deletion do.
@Suite struct CallTests {
    /// Ada and Bob matched; Cy is matched with Ada in another conversation, and a stranger to Bob's.
    struct Cast {
        let ada = UUID(), bob = UUID(), cy = UUID()
        let adaAndBob: MatchOpened
        let adaAndCy: MatchOpened

        init() {
            adaAndBob = MatchOpened(
                matchId: UUID(), flow: "tutoring", campus: "helsinki.fi",
                members: [
                    MatchMember(userId: ada, name: "Ada Quill", role: "student"),
                    MatchMember(userId: bob, name: "Bob Stone", role: "tutor"),
                ],
                subject: "Calculus", version: 1)
            adaAndCy = MatchOpened(
                matchId: UUID(), flow: "rides", campus: "helsinki.fi",
                members: [
                    MatchMember(userId: ada, name: "Ada Quill", role: "rider"),
                    MatchMember(userId: cy, name: "Cy Vale", role: "driver"),
                ],
                subject: "To Porthania", version: 1)
        }
    }

    static func make(_ environment: [String: String] = [:]) async throws -> (ChatTestApp, Cast) {
        let app = try await ChatTestApp.make(environment: environment)
        let cast = Cast()
        try await app.apply { connection in
            try ConversationPostgresRepository.open(cast.adaAndBob, on: connection)
            try ConversationPostgresRepository.open(cast.adaAndCy, on: connection)
        }
        return (app, cast)
    }

    static func status(of callId: String, in app: ChatTestApp) async throws -> String? {
        try await app.database.pool.query("SELECT status FROM calls WHERE id = \(UUID(uuidString: callId)!)")
            .first?.decode("status")
    }

    @Test func aCallRingsIsAnsweredSignalledAndHungUpAndTheConversationShowsIt() async throws {
        // NB: rings long enough that no call here is missed, however slow the machine.
        let (app, cast) = try await Self.make(["CALL_RING_SECONDS": "300"])
        let (ada, bob, cy) = (
            try await app.token(cast.ada, name: "Ada Quill"), try await app.token(cast.bob, name: "Bob Stone"),
            try await app.token(cast.cy, name: "Cy Vale")
        )
        try await app.test { client in
            let (started, call) = try await client.call(
                .post, "/v1/calls", token: ada, body: ["matchId": cast.adaAndBob.matchId.uuidString, "video": true])
            #expect(started == .created && call["status"] as? String == "ringing" && call["video"] as? Bool == true)
            let callId = try #require(call["id"] as? String)

            // One call at a time: Ada cannot call Cy, nor Cy Ada; a stranger cannot ring Bob, nor touch the call.
            let (busy, problem) = try await client.call(
                .post, "/v1/calls", token: ada, body: ["matchId": cast.adaAndCy.matchId.uuidString])
            #expect(busy == .conflict && problem["detail"] as? String == "You are in another call.")
            let (otherBusy, otherProblem) = try await client.call(
                .post, "/v1/calls", token: cy, body: ["matchId": cast.adaAndCy.matchId.uuidString])
            #expect(otherBusy == .conflict && otherProblem["detail"] as? String == "Ada Quill is in another call.")
            let (stranger, _) = try await client.call(
                .post, "/v1/calls", token: cy, body: ["matchId": cast.adaAndBob.matchId.uuidString])
            #expect(stranger == .notFound)
            for verb in ["answer", "decline", "hangup"] {
                let (refused, _) = try await client.call(.post, "/v1/calls/\(callId)/\(verb)", token: cy)
                #expect(refused == .notFound, "\(verb)")
            }
            let (peek, _) = try await client.call(.get, "/v1/calls/\(callId)", token: cy)
            #expect(peek == .notFound)
            let offer: [String: Any] = ["description": ["type": "offer", "sdp": "v=0\r\n"]]
            let (strangerSignal, _) = try await client.call(
                .post, "/v1/calls/\(callId)/signals", token: cy, body: offer)
            #expect(strangerSignal == .notFound)
            let (ownAnswer, _) = try await client.call(.post, "/v1/calls/\(callId)/answer", token: ada)
            #expect(ownAnswer == .conflict)

            let (answered, active) = try await client.call(.post, "/v1/calls/\(callId)/answer", token: bob)
            #expect(answered == .ok && active["status"] as? String == "active")
            let (signalled, _) = try await client.call(.post, "/v1/calls/\(callId)/signals", token: ada, body: offer)
            #expect(signalled == .accepted)
            let candidate: [String: Any] = [
                "candidate": [
                    "candidate": "candidate:1 1 udp 2 127.0.0.1 49160 typ relay", "sdpMid": "0",
                    "sdpMLineIndex": 0,
                ]
            ]
            let (candidateSent, _) = try await client.call(
                .post, "/v1/calls/\(callId)/signals", token: bob, body: candidate)
            #expect(candidateSent == .accepted)
            let (oversized, sizeProblem) = try await client.call(
                .post, "/v1/calls/\(callId)/signals", token: ada,
                body: ["description": ["type": "offer", "sdp": String(repeating: "a", count: 16_385)]])
            #expect(oversized == .badRequest && sizeProblem["field"] as? String == "description.sdp")

            let (hungUp, ended) = try await client.call(.post, "/v1/calls/\(callId)/hangup", token: bob)
            #expect(hungUp == .ok && ended["status"] as? String == "ended")
            let (late, _) = try await client.call(.post, "/v1/calls/\(callId)/signals", token: ada, body: offer)
            #expect(late == .conflict)
            let (again, _) = try await client.call(.post, "/v1/calls/\(callId)/hangup", token: ada)
            #expect(again == .conflict)

            // The conversation shows the call; both are free to call again, and Bob declines the next.
            let (_, history) = try await client.call(
                .get, "/v1/conversations/\(cast.adaAndBob.matchId)/messages", token: bob)
            let line = try #require((history["messages"] as? [[String: Any]])?.first)
            #expect((line["text"] as? String)?.hasPrefix("Call, ") == true)
            #expect((line["id"] as? String)?.lowercased() == callId.lowercased())
            let (_, declinedCall) = try await client.call(
                .post, "/v1/calls", token: ada, body: ["matchId": cast.adaAndBob.matchId.uuidString])
            let declinedId = try #require(declinedCall["id"] as? String)
            let (declined, answer) = try await client.call(.post, "/v1/calls/\(declinedId)/decline", token: bob)
            #expect(declined == .ok && answer["status"] as? String == "declined")
            let (_, after) = try await client.call(
                .get, "/v1/conversations/\(cast.adaAndBob.matchId)/messages", token: bob)
            #expect((after["messages"] as? [[String: Any]])?.first?["text"] as? String == "Declined call")
            let (next, _) = try await client.call(
                .post, "/v1/calls", token: cy, body: ["matchId": cast.adaAndCy.matchId.uuidString])
            #expect(next == .created)
        }
        let types = try await app.database.pool.query("SELECT type FROM outbox ORDER BY seq").map {
            try $0.decode("type", as: String.self)
        }
        #expect(
            types.filter { $0.hasPrefix("call.") } == [
                "call.ringing", "call.answered", "call.ended", "call.ringing", "call.ended", "call.ringing",
            ])
        let ringing: String = try await app.database.pool.query(
            "SELECT payload::text AS payload FROM outbox WHERE type = 'call.ringing' ORDER BY seq LIMIT 1"
        ).first!.decode("payload")
        let event = try JSONSerialization.jsonObject(with: Data(ringing.utf8)) as? [String: Any]
        #expect(event?["recipients"] as? [String] == [cast.bob.uuidString])
        #expect((event?["notice"] as? [String: Any])?["title"] as? String == "Ada is calling")
    }

    @Test func anUnansweredCallIsMissedAndTheCalleeIsTold() async throws {
        let (app, cast) = try await Self.make(["CALL_RING_SECONDS": "1"])
        let (ada, bob) = (try await app.token(cast.ada, name: "Ada Quill"), try await app.token(cast.bob, name: "Bob"))
        try await app.test { client in
            let body = ["matchId": cast.adaAndBob.matchId.uuidString]
            let (_, call) = try await client.call(.post, "/v1/calls", token: ada, body: body)
            let callId = try #require(call["id"] as? String)
            try await eventually("the call is missed") { try await Self.status(of: callId, in: app) == "missed" }
            let (late, _) = try await client.call(.post, "/v1/calls/\(callId)/answer", token: bob)
            #expect(late == .conflict)
            let (_, history) = try await client.call(
                .get, "/v1/conversations/\(cast.adaAndBob.matchId)/messages", token: bob)
            #expect((history["messages"] as? [[String: Any]])?.map { $0["text"] as? String } == ["Missed call"])
        }
        // The missed call reaches Bob as a message: in his feed, and pushed when no app of his is open.
        let missed = try await app.database.pool.query(
            "SELECT payload::text AS payload FROM outbox WHERE type = \(MessageSent.type) ORDER BY seq LIMIT 1"
        ).first!.decode("payload", as: String.self)
        let event = try JSONSerialization.jsonObject(with: Data(missed.utf8)) as? [String: Any]
        #expect(event?["text"] as? String == "Missed call")
        #expect(event?["recipients"] as? [String] == [cast.bob.uuidString])
    }

    @Test func aClosingMatchEndsItsCallAndADeletedAccountsCallsGo() async throws {
        let (app, cast) = try await Self.make(["CALL_RING_SECONDS": "300"])
        let ada = try await app.token(cast.ada, name: "Ada Quill")
        try await app.test { client in
            let (_, call) = try await client.call(
                .post, "/v1/calls", token: ada, body: ["matchId": cast.adaAndBob.matchId.uuidString])
            let callId = try #require(call["id"] as? String)
            try await app.apply { try MatchEventsConsumer.handlers.apply(cast.adaAndBob.closed(version: 2), on: $0) }
            #expect(try await Self.status(of: callId, in: app) == "cancelled")
            let (closed, _) = try await client.call(
                .post, "/v1/calls", token: ada, body: ["matchId": cast.adaAndBob.matchId.uuidString])
            #expect(closed == .notFound)

            let (_, other) = try await client.call(
                .post, "/v1/calls", token: ada, body: ["matchId": cast.adaAndCy.matchId.uuidString])
            #expect(other["status"] as? String == "ringing")
            try await app.apply {
                try MatchEventsConsumer.handlers.apply(UserDeleted(userId: cast.ada, campus: "helsinki.fi"), on: $0)
            }
            let left: Int = try await app.database.pool.query(
                "SELECT (SELECT count(*) FROM calls) + (SELECT count(*) FROM call_parties) AS n"
            ).first!.decode("n")
            #expect(left == 0)
        }
    }

    @Test func badCallsAreProblemsAndStoreNothing() async throws {
        let (app, cast) = try await Self.make(["CALL_RING_SECONDS": "300"])
        let ada = try await app.token(cast.ada, name: "Ada Quill")
        try await app.test { client in
            let bad: [([String: Any], HTTPResponse.Status)] = [
                ([:], .badRequest), (["matchId": "nonsense"], .badRequest), (["matchId": UUID().uuidString], .notFound),
                (["matchId": cast.adaAndBob.matchId.uuidString, "video": "yes"], .badRequest),
            ]
            for (body, status) in bad {
                let (answer, _) = try await client.call(.post, "/v1/calls", token: ada, body: body)
                #expect(answer == status, "\(body)")
            }
            let (unknown, _) = try await client.call(.post, "/v1/calls/\(UUID())/answer", token: ada)
            #expect(unknown == .notFound)
            let (noSignal, _) = try await client.call(
                .post, "/v1/calls/\(UUID())/signals", token: ada, body: ["description": ["type": "offer", "sdp": ""]])
            #expect(noSignal == .notFound)
        }
        let stored: Int = try await app.database.pool.query("SELECT count(*) AS n FROM calls").first!.decode("n")
        #expect(stored == 0)
    }
}
