import Foundation

/// A chat as its member sees it in the list.
struct ConversationSummary: Codable, Sendable, Equatable {
    struct Member: Codable, Sendable, Equatable {
        var id: UUID
        var name: String
    }

    var id: UUID
    var matchId: UUID
    var isOpen: Bool
    var otherMember: Member
    var lastMessage: Message?
    var unreadCount: Int

    enum CodingKeys: String, CodingKey {
        case id, matchId, otherMember, lastMessage, unreadCount
        case isOpen = "open"
    }
}

struct Message: Codable, Sendable, Equatable {
    var id: UUID
    var conversationId: UUID
    var senderId: UUID
    var text: String
    var sentAt: Date
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
        guard raw.count <= maxTextLength else {
            throw .invalid(field: "text", "A message can have at most \(maxTextLength) characters.")
        }
        return raw
    }

    static func limit(_ raw: String?) throws(ChatError) -> Int {
        guard let raw else { return 50 }
        guard let limit = Int(raw), (1...maxPageSize).contains(limit) else {
            throw .invalid(field: "limit", "limit is a whole number from 1 to \(maxPageSize).")
        }
        return limit
    }

    static func cursor(_ raw: String?) throws(ChatError) -> UUID? {
        guard let raw else { return nil }
        guard let id = UUID(uuidString: raw) else { throw .invalid(field: "before", "before is a message id.") }
        return id
    }
}
