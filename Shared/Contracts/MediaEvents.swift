import Foundation

/// An image was stored: services that take a photo id (a profile, a listing) learn from this whose it is.
public struct MediaStored: Event, Equatable {
    public static let type = "media.stored"
    public var mediaId: UUID
    public var ownerId: UUID
    public var campus: String
    public var contentType: String
    public var width: Int
    public var height: Int
    public var version: Int64
    public var aggregateId: UUID { mediaId }

    public init(mediaId: UUID, ownerId: UUID, campus: String, contentType: String, width: Int, height: Int) {
        self.mediaId = mediaId
        self.ownerId = ownerId
        self.campus = campus
        self.contentType = contentType
        self.width = width
        self.height = height
        self.version = 1
    }
}

/// Its owner deleted an image: it is no one's photo any more.
public struct MediaDeleted: Event, Equatable {
    public static let type = "media.deleted"
    public var mediaId: UUID
    public var ownerId: UUID
    public var version: Int64
    public var aggregateId: UUID { mediaId }

    public init(mediaId: UUID, ownerId: UUID) {
        self.mediaId = mediaId
        self.ownerId = ownerId
        self.version = 2
    }
}
