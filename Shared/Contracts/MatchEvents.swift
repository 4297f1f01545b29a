import Foundation

/// One of the two (or more) students of a match, as every flow names them.
public struct MatchMember: Codable, Sendable, Equatable {
    public var userId: UUID
    public var name: String
    /// The member's side in its flow: `orderer`, `deliverer`, `student`, `tutor`, `rider`, `driver`.
    public var role: String

    public init(userId: UUID, name: String, role: String) {
        self.userId = userId
        self.name = name
        self.role = role
    }
}

/// Students of a flow were matched: chat opens their conversation (whose id is the match's). Every flow
/// publishes it besides its own events, so that chat needs to know no flow.
public struct MatchOpened: Event, Equatable {
    public static let type = "match.opened"
    public var matchId: UUID
    /// `delivery`, `tutoring`, `exchange`, `rides`.
    public var flow: String
    public var campus: String
    public var members: [MatchMember]
    /// One line that says what the match is about: "Falafel wraps to Porthania".
    public var subject: String
    public var version: Int64
    public var aggregateId: UUID { matchId }

    public init(matchId: UUID, flow: String, campus: String, members: [MatchMember], subject: String, version: Int64) {
        self.matchId = matchId
        self.flow = flow
        self.campus = campus
        self.members = members
        self.subject = subject
        self.version = version
    }
}

/// A match ended: its chat closes. `reason` is `completed`, `cancelled` or `unmatched`.
public struct MatchClosed: Event, Equatable {
    public static let type = "match.closed"
    public var matchId: UUID
    public var flow: String
    public var reason: String
    /// The members' ids, so that a close that arrives before its open still knows whose chat it is.
    public var memberIds: [UUID]
    public var version: Int64
    public var aggregateId: UUID { matchId }

    public init(matchId: UUID, flow: String, reason: String, memberIds: [UUID], version: Int64) {
        self.matchId = matchId
        self.flow = flow
        self.reason = reason
        self.memberIds = memberIds
        self.version = version
    }
}
