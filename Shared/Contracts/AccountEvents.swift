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
