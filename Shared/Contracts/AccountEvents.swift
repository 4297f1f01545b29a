import Foundation

/// A student signed up.
public struct UserRegistered: Event, Equatable {
    public static let type = "user.registered"
    public var userId: UUID
    public var campus: String
    public var name: String
    public var mode: String
    public var version: Int64
    public var aggregateId: UUID { userId }

    public init(userId: UUID, campus: String, name: String, mode: String, version: Int64) {
        self.userId = userId
        self.campus = campus
        self.name = name
        self.mode = mode
        self.version = version
    }
}

/// A student changed their profile (display name or mode).
public struct UserUpdated: Event, Equatable {
    public static let type = "user.updated"
    public var userId: UUID
    public var campus: String
    public var name: String
    public var mode: String
    public var version: Int64
    public var aggregateId: UUID { userId }

    public init(userId: UUID, campus: String, name: String, mode: String, version: Int64) {
        self.userId = userId
        self.campus = campus
        self.name = name
        self.mode = mode
        self.version = version
    }
}
