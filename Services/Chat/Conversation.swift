import Foundation

/// A chat as its member sees it in the list: the match it belongs to, what it is about and who else is in it.
struct ConversationSummary: Encodable, Sendable, Equatable {
    struct Member: Codable, Sendable, Equatable {
        var id: UUID
        var name: String
        /// Their side in the match's flow, as the flow names it.
        var role: String
    }

    var id: UUID
    var matchId: UUID
    /// The flow of the match, as the flow that opened it names itself.
    var flow: String
    /// One line on what the match is about.
    var subject: String
    var isOpen: Bool
    /// Everyone in it but the caller, in the match's order.
    var otherMembers: [Member]
    var lastMessage: Message?
    var unreadCount: Int

    enum CodingKeys: String, CodingKey {
        case id, matchId, flow, subject, otherMembers, otherMember, lastMessage, unreadCount
        case isOpen = "open"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(matchId, forKey: .matchId)
        try container.encode(flow, forKey: .flow)
        try container.encode(subject, forKey: .subject)
        try container.encode(isOpen, forKey: .isOpen)
        try container.encode(otherMembers, forKey: .otherMembers)
        // The first other member, as clients of two-member chats read it.
        try container.encodeIfPresent(otherMembers.first, forKey: .otherMember)
        try container.encodeIfPresent(lastMessage, forKey: .lastMessage)
        try container.encode(unreadCount, forKey: .unreadCount)
    }
}

struct Message: Codable, Sendable, Equatable {
    var id: UUID
    var conversationId: UUID
    var senderId: UUID
    /// Empty once removed.
    var text: String
    var sentAt: Date
    /// Its sender deleted their account: what they wrote is gone, and the other members see that it was there.
    var removed: Bool
}

/// The rules of chat, without I/O.
enum ChatRules {
    static let maxTextLength = 2000
    static let maxPageSize = 100

    /// 1 to 2000 characters, not only white space.
    static func text(_ raw: String) throws(ChatError) -> String {
        guard !raw.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw .invalid(field: "text", "A message needs some text.")
        }
        guard raw.unicodeScalars.count <= maxTextLength else {
            throw .invalid(field: "text", "A message can have at most \(maxTextLength) characters.")
        }
        return raw
    }

    static func cursor(_ raw: String?) throws(ChatError) -> UUID? {
        guard let raw else { return nil }
        guard let id = UUID(uuidString: raw) else { throw .invalid(field: "before", "before is a message id.") }
        return id
    }
}
