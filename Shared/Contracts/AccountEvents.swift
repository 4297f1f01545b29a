import Foundation

/// What other services keep of a student: enough to show a name and scope by campus.
public struct UserSnapshot: Codable, Sendable, Equatable {
    public var userId: UUID
    public var campus: String
    public var name: String
    /// `ordering` or `delivering`.
    public var mode: String
    /// A few lines the student wrote about themselves; absent from events of before it existed.
    public var bio: String?
    /// The student's photo: an image they uploaded to media.
    public var photoId: UUID?

    public init(userId: UUID, campus: String, name: String, mode: String, bio: String? = nil, photoId: UUID? = nil) {
        self.userId = userId
        self.campus = campus
        self.name = name
        self.mode = mode
        self.bio = bio
        self.photoId = photoId
    }
}

/// A student signed up.
public struct UserRegistered: Event, Equatable {
    public static let type = "user.registered"
    public var user: UserSnapshot
    public var version: Int64
    public var aggregateId: UUID { user.userId }

    public init(user: UserSnapshot, version: Int64) {
        self.user = user
        self.version = version
    }
}

/// A student changed their profile (display name or mode).
public struct UserUpdated: Event, Equatable {
    public static let type = "user.updated"
    public var user: UserSnapshot
    public var version: Int64
    public var aggregateId: UUID { user.userId }

    public init(user: UserSnapshot, version: Int64) {
        self.user = user
        self.version = version
    }
}

/// A student blocked another of their campus: from now on neither sees the other in any flow, and what is open
/// between them closes.
public struct UserBlocked: Event, Equatable {
    public static let type = "user.blocked"
    public var blockerId: UUID
    public var blockedId: UUID
    public var campus: String
    /// When the block was made, in microseconds since 1970: a later block or unblock of the pair is higher.
    public var version: Int64
    public var aggregateId: UUID { blockerId }

    public init(blockerId: UUID, blockedId: UUID, campus: String, version: Int64 = .nowInMicroseconds) {
        self.blockerId = blockerId
        self.blockedId = blockedId
        self.campus = campus
        self.version = version
    }
}

/// A student lifted their block of another: each sees the other again where the other has no block of their own.
public struct UserUnblocked: Event, Equatable {
    public static let type = "user.unblocked"
    public var blockerId: UUID
    public var blockedId: UUID
    /// When the block was lifted, in microseconds since 1970.
    public var version: Int64
    public var aggregateId: UUID { blockerId }

    public init(blockerId: UUID, blockedId: UUID, version: Int64 = .nowInMicroseconds) {
        self.blockerId = blockerId
        self.blockedId = blockedId
        self.version = version
    }
}

extension Int64 {
    /// The time now in microseconds since 1970: the version of events whose aggregate keeps no counter of its own.
    public static var nowInMicroseconds: Int64 { Int64(Date().timeIntervalSince1970 * 1_000_000) }
}

/// A campus moderator suspended a student: they cannot log in, and every service hides everything of theirs from
/// everyone, as if everyone had blocked them.
public struct UserSuspended: Event, Equatable {
    public static let type = "user.suspended"
    public var userId: UUID
    public var campus: String
    public var version: Int64
    public var aggregateId: UUID { userId }

    public init(userId: UUID, campus: String, version: Int64 = .nowInMicroseconds) {
        self.userId = userId
        self.campus = campus
        self.version = version
    }
}

/// A student deleted their account. Every service erases or anonymises what it holds of them on receiving it; the
/// event itself carries nothing that names them.
public struct UserDeleted: Event, Equatable {
    public static let type = "user.deleted"
    public var userId: UUID
    public var campus: String
    public var version: Int64
    public var aggregateId: UUID { userId }

    public init(userId: UUID, campus: String, version: Int64 = .nowInMicroseconds) {
        self.userId = userId
        self.campus = campus
        self.version = version
    }
}

/// What others see in place of a person who deleted their account.
public enum ErasedPerson {
    /// The name shown where theirs was: in a finished match, a conversation, a review.
    public static let name = "Deleted account"
}
