import Foundation

/// What other services keep of a place: enough to name it, place it and scope it by campus.
public struct PlaceSnapshot: Codable, Sendable, Equatable {
    public var placeId: UUID
    public var campus: String
    public var name: String
    /// `restaurant` (any place to eat) or `building`.
    public var kind: String
    /// The OpenStreetMap amenity or building value: `cafe`, `pub`, `university`.
    public var subtype: String?
    public var latitude: Double
    public var longitude: Double

    public init(
        placeId: UUID, campus: String, name: String, kind: String, subtype: String?, latitude: Double,
        longitude: Double
    ) {
        self.placeId = placeId
        self.campus = campus
        self.name = name
        self.kind = kind
        self.subtype = subtype
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// A place was imported for the first time, changed, or came back after being retired.
public struct PlaceUpserted: Event, Equatable {
    public static let type = "place.upserted"
    public var place: PlaceSnapshot
    public var version: Int64
    public var aggregateId: UUID { place.placeId }

    public init(place: PlaceSnapshot, version: Int64) {
        self.place = place
        self.version = version
    }
}

/// A place is gone from the newest import.
public struct PlaceRetired: Event, Equatable {
    public static let type = "place.retired"
    public var placeId: UUID
    public var campus: String
    public var version: Int64
    public var aggregateId: UUID { placeId }

    public init(placeId: UUID, campus: String, version: Int64) {
        self.placeId = placeId
        self.campus = campus
        self.version = version
    }
}
