import Contracts
import Foundation
import Messaging
import Postgres

/// Students a flow matched, as chat and notifications know them. Every flow announces its matches through this,
/// so that their chat opens and closes with them whatever the flow.
public struct FlowMatch: Sendable {
    public var id: UUID
    public var flow: String
    public var campus: String
    public var members: [MatchMember]
    /// One line on what the match is about, at most 80 characters.
    public var subject: String

    public init(id: UUID, flow: String, campus: String, members: [MatchMember], subject: String) {
        self.id = id
        self.flow = flow
        self.campus = campus
        self.members = members
        self.subject = Self.oneLine(subject)
    }

    /// Why a match ended.
    public enum Ending: String, Sendable {
        case completed, cancelled, unmatched
        /// One member blocked the other.
        case blocked
        /// What the match was about went to someone else, or was taken back by whoever offered it.
        case superseded, withdrawn
    }

    /// Publishes `match.opened` in the connection's open transaction.
    public func announceOpened(on connection: PostgresConnection) throws {
        try Outbox.append(
            MatchOpened(matchId: id, flow: flow, campus: campus, members: members, subject: subject, version: 1),
            on: connection)
    }

    /// Publishes `match.closed` in the connection's open transaction; `version` is above the opening's 1.
    public func announceClosed(_ ending: Ending, version: Int64, on connection: PostgresConnection) throws {
        try Outbox.append(
            MatchClosed(
                matchId: id, flow: flow, reason: ending.rawValue, memberIds: members.map(\.userId),
                version: max(version, 2)),
            on: connection)
    }

    /// The first line, white space folded, cut to 80 characters.
    static func oneLine(_ text: String) -> String {
        let line = text.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let folded = line.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return folded.count > 80 ? String(folded.prefix(79)) + "…" : folded
    }
}
