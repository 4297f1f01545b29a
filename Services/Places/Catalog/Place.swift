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
    /// How much a place's text must resemble a typed text to match it (pg_trgm's word similarity). NB: 0.6, its
    /// default, misses one-letter typos in short names ("porthnia" scores 0.58 against "porthania").
    static let likeness = 0.45

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

    /// Where to look for the places a text only resembles.
    enum Reach: Equatable {
        case nowhere
        case within(meters: Double)
        case anywhere
    }

    /// How far from the searcher a place may lie and still rank among the best `limit` of `scores`, when it scores
    /// at most `best` before its distance is taken off (0.1 a kilometre, up to 0.3): anywhere while the scores do not
    /// fill the page or the lowest of them is 0.3 or more below `best`, nowhere when it is above `best`. A place the
    /// text only resembles scores at most 1 (its text holds the text's words, and the text begins no name of it).
    static func reach(beside scores: [Double], limit: Int, best: Double = 1) -> Reach {
        guard scores.count >= limit, let lowest = scores.min(), best - lowest < 0.3 else { return .anywhere }
        guard lowest <= best else { return .nowhere }
        // A metre more, for rounding.
        return .within(meters: (best - lowest) * 10_000 + 1)
    }

    /// How much a place's text must resemble a typed text to be looked for first, and then second, when the text
    /// begins a few names but resembles thousands of others ("mitoto" resembles every word that begins "mito"): one
    /// that resembles it less scores less than that, less its distance.
    static let closeLikenesses = [0.7, 0.6]

    /// The widest circle around the searcher whose places are read one by one to find those a text resembles;
    /// past it, asking the trigram index for all of them is cheaper (a city has some 2,000 places in such a circle).
    static let widestNearSearch = 1_200.0

    /// The least text after all that `prefix` begins, in code point order (PostgreSQL's `text_pattern_ops` and
    /// `"C"`): its last character's successor; nil when that is past the last character there is, all the way back.
    static func prefixEnd(of prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            // NB: the surrogates, U+D800 to U+DFFF, are no characters.
            let value = last.value == 0xD7FF ? 0xE000 : last.value + 1
            if let successor = Unicode.Scalar(value) {
                scalars.append(successor)
                var end = String.UnicodeScalarView()
                end.append(contentsOf: scalars)
                return String(end)
            }
        }
        return nil
    }

    /// Search text in the form the index holds: lower case without accents is done by PostgreSQL's unaccent;
    /// this escapes LIKE's wildcards so that `%` and `_` match themselves.
    ///
    /// NB: by Unicode scalar: a wildcard that a combining mark follows is one character with it, yet still a wildcard.
    static func likeEscaped(_ text: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "%" || scalar == "_" || scalar == "\\" { escaped.append("\\") }
            escaped.append(scalar)
        }
        return String(escaped)
    }
}
