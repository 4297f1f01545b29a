import Contracts
import Foundation

/// A student and a tutor liked each other: both are told, and chat opens their conversation from `match.opened`.
public struct TutoringMatched: Event, Equatable {
    public static let type = "tutoring.matched"
    public var matchId: UUID
    public var campus: String
    public var members: [MatchMember]
    /// The courses they share, normalised (`MAT-101`).
    public var courses: [String]
    public var recipients: [UUID]
    public var version: Int64
    public var notice: Notice?
    public var aggregateId: UUID { matchId }

    public init(matchId: UUID, campus: String, members: [MatchMember], courses: [String], version: Int64) {
        self.matchId = matchId
        self.campus = campus
        self.members = members
        self.courses = courses
        self.recipients = members.map(\.userId)
        self.version = version
        notice = Notice(
            title: "It's a match",
            body: members.map { Notice.firstName($0.name) }.joined(separator: " and ") + " liked each other"
                + (courses.isEmpty ? "" : " (\(courses.joined(separator: ", ")))") + ": say hello")
    }
}

/// One of a tutoring match unmatched: both are told, the chat closes, and neither sees the other again.
public struct TutoringUnmatched: Event, Equatable {
    public static let type = "tutoring.unmatched"
    public var matchId: UUID
    public var unmatchedBy: UUID
    public var recipients: [UUID]
    public var version: Int64
    public var aggregateId: UUID { matchId }

    public init(matchId: UUID, unmatchedBy: UUID, memberIds: [UUID], version: Int64) {
        self.matchId = matchId
        self.unmatchedBy = unmatchedBy
        self.recipients = memberIds
        self.version = version
    }
}
