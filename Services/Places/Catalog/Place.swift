import Foundation

/// What a place is for the app: somewhere to get food, or somewhere to deliver it.
package enum PlaceKind: String, Codable, Sendable, CaseIterable {
    case restaurant
    case building
}

/// A postal address from the `addr:*` tags; the postcode stays text (`00100`).
package struct Address: Codable, Sendable, Equatable, Hashable {
    var street: String?
    var housenumber: String?
    var postcode: String?
    var city: String?

    var isEmpty: Bool { street == nil && housenumber == nil && postcode == nil && city == nil }

    /// `Yliopistonkatu 3, 00100 Helsinki`.
    var line: String {
        let first = [street, housenumber].compactMap { $0 }.joined(separator: " ")
        let second = [postcode, city].compactMap { $0 }.joined(separator: " ")
        return [first, second].filter { !$0.isEmpty }.joined(separator: ", ")
    }
}

/// A point on the earth, in degrees.
package struct Coordinate: Codable, Sendable, Equatable, Hashable {
    package var latitude: Double
    package var longitude: Double

    package init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    package var isValid: Bool {
        latitude.isFinite && longitude.isFinite && (-90...90).contains(latitude) && (-180...180).contains(longitude)
    }
}

/// A place as the API shows it.
package struct Place: Codable, Sendable, Equatable {
    var id: UUID
    var name: String
    var kind: PlaceKind
    var subtype: String?
    var cuisine: String?
    var address: Address?
    var openingHours: String?
    var latitude: Double
    var longitude: Double
    var campus: String
    /// Distance from the point the search was made from, when there was one.
    var distanceMeters: Double?
}

/// The query rules of place search, without I/O.
package enum PlaceQuery {
    package static let maxRadiusMeters = 5000.0
    package static let maxQueryLength = 100

    package static func kind(_ raw: String?) throws(PlaceError) -> PlaceKind? {
        guard let raw else { return nil }
        guard let kind = PlaceKind(rawValue: raw) else {
            throw .invalid(field: "kind", "kind is restaurant or building.")
        }
        return kind
    }

    package static func latitude(_ raw: String?, field: String = "lat") throws(PlaceError) -> Double {
        guard let raw, let value = Double(raw), value.isFinite, (-90...90).contains(value) else {
            throw .invalid(field: field, "\(field) is a latitude from -90 to 90.")
        }
        return value
    }

    package static func longitude(_ raw: String?, field: String = "lon") throws(PlaceError) -> Double {
        guard let raw, let value = Double(raw), value.isFinite, (-180...180).contains(value) else {
            throw .invalid(field: field, "\(field) is a longitude from -180 to 180.")
        }
        return value
    }

    /// Search text in the form the index holds: lower case without accents is done by PostgreSQL's unaccent;
    /// this escapes LIKE's wildcards so that `%` and `_` match themselves.
    static func likeEscaped(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "%" || character == "_" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
