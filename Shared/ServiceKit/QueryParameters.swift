import Foundation

/// The query parameters every list shares, read once: a page size and an opaque page cursor. Bad values are 400
/// problems that name the parameter.
public enum QueryParameters {
    /// `limit`: a page size within `range`, `default` when not given.
    public static func limit(_ raw: String?, default: Int = 20, range: ClosedRange<Int> = 1...50) throws -> Int {
        guard let raw else { return `default` }
        guard let limit = Int(raw), range.contains(limit) else {
            throw Problem.invalid("limit", "limit is a number from \(range.lowerBound) to \(range.upperBound).")
        }
        return limit
    }

    /// `near`: a point as `lat,lon` in degrees, nil when not given.
    public static func near(_ raw: String?) throws -> (latitude: Double, longitude: Double)? {
        guard let raw else { return nil }
        let parts = raw.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let latitude = Double(parts[0].trimmingCharacters(in: .whitespaces)),
            let longitude = Double(parts[1].trimmingCharacters(in: .whitespaces)), latitude.isFinite,
            longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude)
        else { throw Problem.invalid("near", "near is lat,lon in degrees, such as 60.1699,24.9384.") }
        return (latitude, longitude)
    }

    /// `radius`: a distance in meters within `range`, `default` when not given.
    public static func radius(_ raw: String?, default: Double, range: ClosedRange<Double>) throws -> Double {
        guard let raw else { return `default` }
        guard let radius = Double(raw), radius.isFinite, range.contains(radius) else {
            throw Problem.invalid(
                "radius", "radius is a distance in meters from \(Int(range.lowerBound)) to \(Int(range.upperBound)).")
        }
        return radius
    }

    /// A search text (`q`): white space folded to single spaces, at most `maxLength` characters; nil when blank.
    public static func text(_ raw: String?, field: String = "q", maxLength: Int = 100) throws -> String? {
        guard let raw else { return nil }
        let text = raw.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        guard raw.unicodeScalars.count <= maxLength else {
            throw Problem.invalid(field, "\(field) can have at most \(maxLength) characters.")
        }
        return text.isEmpty ? nil : text
    }

    /// A flag: `true` or `false`, false when not given.
    public static func flag(_ raw: String?, field: String) throws -> Bool {
        switch raw {
        case nil, "false": return false
        case "true": return true
        default: throw Problem.invalid(field, "\(field) is true or false.")
        }
    }
}

/// A page cursor (`after`, answered as `next`): the fields that place the last item of a page, opaque to clients as
/// base64 (URL alphabet, unpadded) of the fields joined by `|`. Each list says which fields, and how many.
public enum PageCursor {
    public static func text(_ fields: [String]) -> String {
        Data(fields.joined(separator: "|").utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The `count` fields of a cursor this service wrote; 400 naming `after` for anything else.
    public static func fields(_ raw: String, count: Int) throws -> [String] {
        var base64 = raw.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else {
            throw invalid
        }
        let fields = text.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == count else { throw invalid }
        return fields
    }

    public static let invalid = Problem.invalid("after", "after is the next value of a previous page.")
}
