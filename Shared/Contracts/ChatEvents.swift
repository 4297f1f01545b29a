import Foundation

/// The chat of a match opened or closed (`Change` gives which); its members are told. A closed chat is read-only.
public struct ConversationChanged<Change: ConversationChange>: Event, Equatable {
    public static var type: String { Change.type }
    public var conversationId: UUID
    public var matchId: UUID
    public var memberIds: [UUID]
    public var version: Int64
    /// The users it concerns: its members.
    public var recipients: [UUID]
    public var aggregateId: UUID { conversationId }

    public init(conversationId: UUID, matchId: UUID, memberIds: [UUID], version: Int64) {
        self.conversationId = conversationId
        self.matchId = matchId
        self.memberIds = memberIds
        self.version = version
        recipients = memberIds
    }
}

/// What happened to a chat: the type of its `ConversationChanged`.
public protocol ConversationChange: Sendable {
    static var type: String { get }
}

/// The chat of a match opened.
public typealias ConversationOpened = ConversationChanged<ConversationOpening>
/// The chat closed with its match; it is read-only from now on.
public typealias ConversationClosed = ConversationChanged<ConversationClosing>

/// `conversation.opened`.
public enum ConversationOpening: ConversationChange {
    public static let type = "conversation.opened"
}

/// `conversation.closed`.
public enum ConversationClosing: ConversationChange {
    public static let type = "conversation.closed"
}

/// A member sent a message; the other members are its recipients.
public struct MessageSent: Event, Equatable {
    public static let type = "message.sent"
    public var messageId: UUID
    public var conversationId: UUID
    public var senderId: UUID
    public var senderName: String
    public var recipients: [UUID]
    public var text: String
    public var sentAt: Date
    /// Messages are never edited: always 1.
    public var version: Int64
    public var aggregateId: UUID { messageId }

    public init(
        messageId: UUID, conversationId: UUID, senderId: UUID, senderName: String, recipients: [UUID], text: String,
        sentAt: Date
    ) {
        self.messageId = messageId
        self.conversationId = conversationId
        self.senderId = senderId
        self.senderName = senderName
        self.recipients = recipients
        self.text = text
        self.sentAt = sentAt
        version = 1
    }

    /// The event's JSON as `JSONEncoder` writes it with `.iso8601` times (its keys in another order, `/` not
    /// escaped), written directly: chat writes one for every message.
    public var json: String {
        var object = JSONObjectWriter()
        object.add("messageId", messageId)
        object.add("conversationId", conversationId)
        object.add("senderId", senderId)
        object.add("senderName", senderName)
        object.add("recipients", recipients)
        object.add("text", text)
        object.add("sentAt", sentAt, .iso8601)
        object.add("version", version)
        return String(decoding: object.finished(), as: UTF8.self)
    }
}

/// Messages of a conversation removed: their author deleted their account. The other members' open chats blank them
/// at once. It names neither the author nor what they wrote.
public struct MessagesRemoved: Event, Equatable {
    public static let type = "message.removed"
    public var conversationId: UUID
    public var messageIds: [UUID]
    /// The conversation's other members.
    public var recipients: [UUID]
    /// A removal is never revised: always 1.
    public var version: Int64
    public var aggregateId: UUID { conversationId }

    public init(conversationId: UUID, messageIds: [UUID], recipients: [UUID]) {
        self.conversationId = conversationId
        self.messageIds = messageIds
        self.recipients = recipients
        version = 1
    }
}

/// A member read a conversation up to a message: their other devices are told, and how many messages of the others
/// are still unread in it (the badge on an app's icon counts the conversations with some).
public struct ConversationRead: Event, Equatable {
    public static let type = "conversation.read"
    public var conversationId: UUID
    public var userId: UUID
    public var unread: Int
    /// The seq of the last message read: a later read is higher.
    public var version: Int64
    /// The reader alone.
    public var recipients: [UUID]
    public var aggregateId: UUID { conversationId }

    public init(conversationId: UUID, userId: UUID, unread: Int, version: Int64) {
        self.conversationId = conversationId
        self.userId = userId
        self.unread = unread
        self.version = version
        recipients = [userId]
    }
}
