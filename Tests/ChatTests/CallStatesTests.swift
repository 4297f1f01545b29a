import Foundation
import Testing

@testable import Chat

/// The calls' rules without I/O: every state with every action, who may do what, and what a signal may carry.
@Suite struct CallStatesTests {
    @Test func everyStateWithEveryAction() {
        let allowed: [CallStatus: [CallStatus.Action: CallStatus]] = [
            .ringing: [
                .answer: .active, .decline: .declined, .hangUpByCallee: .declined, .hangUpByCaller: .cancelled,
                .ringOut: .missed, .matchClosed: .cancelled,
            ],
            .active: [.hangUpByCaller: .ended, .hangUpByCallee: .ended, .matchClosed: .ended],
        ]
        for status in CallStatus.allCases {
            for action in CallStatus.Action.allCases {
                let expected = allowed[status]?[action]
                let result = try? status.after(action)
                #expect(result == expected, "\(status) after \(action)")
                if expected == nil {
                    #expect(throws: ChatError.self) { try status.after(action) }
                }
            }
        }
        #expect(CallStatus.allCases.filter(\.isLive) == [.ringing, .active])
    }

    @Test func onlyTheCalleeAnswersOrDeclinesAndEitherHangsUp() throws {
        #expect(try CallRules.action(.answer, byCaller: false) == .answer)
        #expect(try CallRules.action(.decline, byCaller: false) == .decline)
        #expect(try CallRules.action(.hangup, byCaller: true) == .hangUpByCaller)
        #expect(try CallRules.action(.hangup, byCaller: false) == .hangUpByCallee)
        #expect(throws: ChatError.self) { try CallRules.action(.answer, byCaller: true) }
        #expect(throws: ChatError.self) { try CallRules.action(.decline, byCaller: true) }
    }

    @Test func whatTheConversationShowsOfACall() {
        #expect(CallRules.summary(.ended, seconds: 59) == "Call, under a minute")
        #expect(CallRules.summary(.ended, seconds: 245) == "Call, 4 min")
        #expect(CallRules.summary(.missed, seconds: 0) == "Missed call")
        #expect(CallRules.summary(.declined, seconds: 0) == "Declined call")
        #expect(CallRules.summary(.cancelled, seconds: 0) == nil)
    }

    @Test func aSignalCarriesOneDescriptionOrOneCandidateWithinItsSize() throws {
        let offer = CallSignal.Description(type: "offer", sdp: "v=0")
        let candidate = CallSignal.Candidate(
            candidate: "candidate:1 1 udp 1 127.0.0.1 5000 typ relay", sdpMid: "0",
            sdpMLineIndex: 0)
        #expect(try CallSignal(description: offer).validated().description == offer)
        #expect(try CallSignal(candidate: candidate).validated().candidate == candidate)
        let refused: [(CallSignal, String)] = [
            (CallSignal(), "description"),
            (CallSignal(description: offer, candidate: candidate), "description"),
            (CallSignal(description: .init(type: "hello", sdp: "v=0")), "description.type"),
            (
                CallSignal(description: .init(type: "offer", sdp: String(repeating: "a", count: 16_385))),
                "description.sdp"
            ),
            (CallSignal(candidate: .init(candidate: String(repeating: "c", count: 1025))), "candidate.candidate"),
            (CallSignal(candidate: .init(candidate: "c", sdpMLineIndex: 99)), "candidate.sdpMLineIndex"),
        ]
        for (signal, field) in refused {
            let error = #expect(throws: ChatError.self) { try signal.validated() }
            guard case .invalid(let named, _) = error else { continue }
            #expect(named == field)
        }
    }
}
