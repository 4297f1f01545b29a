import Foundation

/// A chat between the orderer and the deliverer of a match opened; both are members.
public struct ConversationOpened: Event, Equatable {
    public static let type = "conversation.opened"
    public var conversationId: UUID
    public var matchId: UUID
    public var memberIds: [UUID]
    public var version: Int64
    public var aggregateId: UUID { conversationId }

    public init(conversationId: UUID, matchId: UUID, memberIds: [UUID], version: Int64) {
        self.conversationId = conversationId
        self.matchId = matchId
        self.memberIds = memberIds
        self.version = version
    }
}

/// The chat closed with its match (completed or cancelled); it is read-only from now on.
public struct ConversationClosed: Event, Equatable {
    public static let type = "conversation.closed"
    public var conversationId: UUID
    public var matchId: UUID
    public var memberIds: [UUID]
    public var version: Int64
    public var aggregateId: UUID { conversationId }

    public init(conversationId: UUID, matchId: UUID, memberIds: [UUID], version: Int64) {
        self.conversationId = conversationId
        self.matchId = matchId
        self.memberIds = memberIds
        self.version = version
    }
}

/// A member sent a message; the other member is its recipient.
public struct MessageSent: Event, Equatable {
    public static let type = "message.sent"
    public var messageId: UUID
    public var conversationId: UUID
    public var senderId: UUID
    public var senderName: String
    public var recipientId: UUID
    public var text: String
    public var sentAt: Date
    /// Messages are never edited: always 1.
    public var version: Int64
    public var aggregateId: UUID { messageId }

    public init(
        messageId: UUID, conversationId: UUID, senderId: UUID, senderName: String, recipientId: UUID, text: String,
        sentAt: Date
    ) {
        self.messageId = messageId
        self.conversationId = conversationId
        self.senderId = senderId
        self.senderName = senderName
        self.recipientId = recipientId
        self.text = text
        self.sentAt = sentAt
        version = 1
    }
}
