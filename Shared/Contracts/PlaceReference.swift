import Foundation

/// A place as flows' events name it, so that receivers need not look it up; a point a student gave has no id and the
/// name of what is near it.
public struct PlaceReference: Codable, Sendable, Equatable {
    public var placeId: UUID?
    public var name: String

    public init(placeId: UUID?, name: String) {
        self.placeId = placeId
        self.name = name
    }
}
