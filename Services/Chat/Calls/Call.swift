import Foundation
import Hummingbird
import ServiceKit

/// Where a call is: ringing, then active (answered) and ended, or declined by the callee, missed (nobody answered
/// within the ring's time) or cancelled (by its caller while it rang, or by its match closing).
enum CallStatus: String, Codable, Sendable, CaseIterable {
    case ringing, active, ended, declined, missed, cancelled

    /// A call that rings or is under way holds both its parties.
    var isLive: Bool { self == .ringing || self == .active }

    enum Action: Sendable, CaseIterable {
        case answer, decline
        case hangUpByCaller, hangUpByCallee
        /// The ring's time passed without an answer.
        case ringOut
        /// The match of its conversation closed (completed, cancelled, a block, a deletion).
        case matchClosed
    }

    /// The state after `action`; every pair not listed is refused (409).
    func after(_ action: Action) throws(ChatError) -> CallStatus {
        switch (self, action) {
        case (.ringing, .answer): .active
        case (.ringing, .decline), (.ringing, .hangUpByCallee): .declined
        case (.ringing, .hangUpByCaller), (.ringing, .matchClosed): .cancelled
        case (.ringing, .ringOut): .missed
        case (.active, .hangUpByCaller), (.active, .hangUpByCallee), (.active, .matchClosed): .ended
        default: throw .callOver("The call is \(rawValue).")
        }
    }
}

/// A call as its two parties read it.
struct Call: Codable, Sendable, Equatable, ResponseEncodable {
    var id: UUID
    /// The conversation (the match) it belongs to.
    var conversationId: UUID
    var callerId: UUID
    var calleeId: UUID
    var video: Bool
    var status: CallStatus
    var createdAt: Date
    var answeredAt: Date?
    var endedAt: Date?
}

/// What a party asks of a call.
enum CallVerb: String, Sendable, CaseIterable {
    case answer, decline, hangup
}

/// The rules of calls, without I/O.
enum CallRules {
    /// The largest session description a signal carries, in UTF-8 bytes: a browser's offer with audio, video and
    /// their candidates is 4–8 KB.
    static let maxSDPBytes = 16_384
    /// The largest ICE candidate line.
    static let maxCandidateBytes = 1024

    /// What `verb` by a party (the caller or not) does to a call: only the callee answers or declines.
    static func action(_ verb: CallVerb, byCaller: Bool) throws(ChatError) -> CallStatus.Action {
        switch (verb, byCaller) {
        case (.answer, false): .answer
        case (.decline, false): .decline
        case (.answer, true), (.decline, true): throw .callOver("You placed this call: hang up to end it.")
        case (.hangup, true): .hangUpByCaller
        case (.hangup, false): .hangUpByCallee
        }
    }

    /// What the conversation shows of a call once it is over; nil for one that left nothing to say (cancelled).
    static func summary(_ status: CallStatus, seconds: Int) -> String? {
        switch status {
        case .ended:
            let minutes = seconds / 60
            return minutes == 0 ? "Call, under a minute" : "Call, \(minutes) min"
        case .missed: return "Missed call"
        case .declined: return "Declined call"
        case .ringing, .active, .cancelled: return nil
        }
    }
}

/// A WebRTC signal one party sends the other: an offer or answer, or an ICE candidate.
struct CallSignal: Codable, Sendable, Equatable {
    struct Description: Codable, Sendable, Equatable {
        var type: String
        var sdp: String
    }

    struct Candidate: Codable, Sendable, Equatable {
        var candidate: String
        var sdpMid: String?
        var sdpMLineIndex: Int?
    }

    var description: Description?
    var candidate: Candidate?

    /// One of the two, within their sizes; 400 naming the field otherwise.
    func validated() throws(ChatError) -> CallSignal {
        guard (description == nil) != (candidate == nil) else {
            throw .invalid(field: "description", "Send a description or a candidate, one at a time.")
        }
        if let description {
            guard ["offer", "answer", "pranswer", "rollback"].contains(description.type) else {
                throw .invalid(field: "description.type", "description.type is offer, answer, pranswer or rollback.")
            }
            guard description.sdp.utf8.count <= CallRules.maxSDPBytes else {
                throw .invalid(
                    field: "description.sdp", "description.sdp has at most \(CallRules.maxSDPBytes) bytes.")
            }
        }
        if let candidate {
            guard candidate.candidate.utf8.count <= CallRules.maxCandidateBytes else {
                throw .invalid(
                    field: "candidate.candidate",
                    "candidate.candidate has at most \(CallRules.maxCandidateBytes) bytes.")
            }
            guard (candidate.sdpMid?.utf8.count ?? 0) <= 64 else {
                throw .invalid(field: "candidate.sdpMid", "candidate.sdpMid has at most 64 bytes.")
            }
            guard (0...64).contains(candidate.sdpMLineIndex ?? 0) else {
                throw .invalid(field: "candidate.sdpMLineIndex", "candidate.sdpMLineIndex is 0 to 64.")
            }
        }
        return self
    }
}
