import Contracts
import Foundation

/// A call rings: the callee hears it on their socket and, with no app open, as a push.
struct CallRinging: Event, Equatable {
    static let type = "call.ringing"
    var callId: UUID
    var conversationId: UUID
    var callerId: UUID
    var callerName: String
    var video: Bool
    /// When it stops ringing unanswered.
    var expiresAt: Date
    var recipients: [UUID]
    var notice: Notice?
    var version: Int64 = 1
    var aggregateId: UUID { callId }

    init(call: Call, callerName: String, expiresAt: Date) {
        callId = call.id
        conversationId = call.conversationId
        callerId = call.callerId
        self.callerName = callerName
        video = call.video
        self.expiresAt = expiresAt
        recipients = [call.calleeId]
        notice = Notice(
            title: "\(Notice.firstName(callerName)) is calling", body: call.video ? "A video call." : "A call.")
    }
}

/// The callee answered: the caller sends their offer, and the callee's other devices stop ringing.
struct CallAnswered: Event, Equatable {
    static let type = "call.answered"
    var callId: UUID
    var conversationId: UUID
    var recipients: [UUID]
    var version: Int64 = 2
    var aggregateId: UUID { callId }

    init(call: Call) {
        callId = call.id
        conversationId = call.conversationId
        recipients = [call.callerId, call.calleeId]
    }
}

/// The call is over, and how: ended after an answer, declined, missed or cancelled.
struct CallEnded: Event, Equatable {
    static let type = "call.ended"
    var callId: UUID
    var conversationId: UUID
    var status: CallStatus
    /// How long it was under way; 0 when it was never answered.
    var seconds: Int
    var recipients: [UUID]
    var version: Int64 = 3
    var aggregateId: UUID { callId }

    init(call: Call, seconds: Int) {
        callId = call.id
        conversationId = call.conversationId
        status = call.status
        self.seconds = seconds
        recipients = [call.callerId, call.calleeId]
    }
}

/// A signal on its way to the other party, as a live frame without `seq` (never a feed entry):
/// `{"type": "call.signal", "data": {"callId", "from", "description"?, "candidate"?}}`.
struct CallSignalFrame: Encodable {
    struct Payload: Encodable {
        var callId: UUID
        var from: UUID
        var description: CallSignal.Description?
        var candidate: CallSignal.Candidate?
    }

    let type = "call.signal"
    var data: Payload

    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return try encoder.encode(self)
    }
}
