import Foundation

/// A place as read from a GeoJSON feature, before it has a campus.
struct PlaceRecord: Sendable, Equatable, Hashable {
    /// The OpenStreetMap object: `node/123`, `way/456`, `relation/789`.
    var sourceKey: String
    var name: String
    var kind: PlaceKind
    var subtype: String?
    var cuisine: String?
    var address: Address
    var openingHours: String?
    /// The point itself, or for an outline a rough centre used only to find its campus.
    var point: Coordinate
    /// The outline's GeoJSON geometry, for polygons; PostGIS places the point inside it.
    var outlineGeoJSON: String?
}

/// What reading one feature gave.
enum FeatureOutcome: Sendable, Equatable {
    case place(PlaceRecord)
    /// A valid feature that is not a place (no name, a line, not food or a building).
    case skipped(reason: String)
    /// A feature that cannot be read, with what is wrong.
    case broken(position: String, problem: String)
    /// A feature without an OpenStreetMap id, which a place needs to keep its id across imports.
    case withoutId(position: String)

    var isPlaceOrSkipped: Bool {
        switch self {
        case .place, .skipped: true
        case .broken, .withoutId: false
        }
    }

    var isWithoutId: Bool {
        if case .withoutId = self { true } else { false }
    }
}

/// Reads GeoJSON as FeatureCollection or GeoJSON Text Sequence (one feature per line, optionally prefixed by the
/// record separator 0x1E), the forms osmium, Overpass and GIS tools export.
enum GeoJSONReader {
    static let placesToEat: Set<String> = ["restaurant", "cafe", "fast_food", "pub", "bar", "food_court"]
    static let campusBuildings: Set<String> = ["university", "college"]

    /// Every feature's outcome, in file order. Throws only when the file as a whole is not GeoJSON.
    static func read(_ data: Data) throws -> [FeatureOutcome] {
        let firstByte = data.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
        if firstByte != 0x1E, let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            switch object["type"] as? String {
            case "FeatureCollection":
                guard let features = object["features"] as? [Any] else {
                    throw GeoJSONError("a FeatureCollection without a features array")
                }
                return try checkedIds(
                    features.enumerated().map { index, feature in outcome(of: feature, position: "feature \(index + 1)")
                    })
            case "Feature":
                return try checkedIds([outcome(of: object, position: "feature 1")])
            default:
                throw GeoJSONError("neither a FeatureCollection nor a Feature")
            }
        }
        var outcomes: [FeatureOutcome] = []
        var lineNumber = 0
        for line in data.split(separator: 0x0A, omittingEmptySubsequences: false) {
            lineNumber += 1
            let record = line.drop { $0 == 0x1E || $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }
            guard !record.isEmpty, !record.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) else { continue }
            guard let feature = try? JSONSerialization.jsonObject(with: Data(record)) else {
                outcomes.append(.broken(position: "line \(lineNumber)", problem: "not valid JSON"))
                continue
            }
            outcomes.append(outcome(of: feature, position: "line \(lineNumber)"))
        }
        if outcomes.isEmpty { throw GeoJSONError("no features") }
        if !outcomes.contains(where: { $0.isPlaceOrSkipped || $0.isWithoutId }) {
            throw GeoJSONError("not GeoJSON: no line holds a feature")
        }
        return try checkedIds(outcomes)
    }

    /// The outcomes, unless no feature has an OpenStreetMap id: then the file was exported without them, and one line
    /// says how to export it with them rather than a line per feature.
    private static func checkedIds(_ outcomes: [FeatureOutcome]) throws -> [FeatureOutcome] {
        guard !outcomes.contains(where: \.isPlaceOrSkipped), outcomes.contains(where: \.isWithoutId) else {
            return outcomes
        }
        throw GeoJSONError(
            "no feature has an OpenStreetMap id; export with them: osmium export --add-unique-id=type_id "
                + "-f geojsonseq FILE.osm.pbf")
    }

    static func outcome(of value: Any, position: String) -> FeatureOutcome {
        guard let feature = value as? [String: Any], feature["type"] as? String == "Feature" else {
            return .broken(position: position, problem: "not a Feature object")
        }
        let properties = feature["properties"] as? [String: Any] ?? [:]
        func tag(_ key: String) -> String? {
            switch properties[key] {
            case let text as String:
                let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
                return trimmed.isEmpty ? nil : trimmed
            case let number as NSNumber: return number.stringValue
            default: return nil
            }
        }
        guard let geometry = feature["geometry"] as? [String: Any], let geometryType = geometry["type"] as? String
        else {
            return .broken(position: position, problem: "no geometry")
        }
        guard let sourceKey = sourceKey(feature: feature, properties: properties) else {
            return .withoutId(position: position)
        }
        guard let name = tag("name") else { return .skipped(reason: "no name") }
        if geometryType == "LineString" || geometryType == "MultiLineString" {
            return .skipped(reason: "a line, not a place")
        }

        let kind: PlaceKind
        var subtype: String?
        if let amenity = tag("amenity"), placesToEat.contains(amenity) {
            kind = .restaurant
            subtype = amenity
        } else if let amenity = tag("amenity"), campusBuildings.contains(amenity) {
            kind = .building
            subtype = amenity
        } else if let building = tag("building"), building != "no" {
            kind = .building
            subtype = building == "yes" ? nil : building
        } else {
            return .skipped(reason: "neither a place to eat nor a building")
        }

        let point: Coordinate
        var outline: String?
        switch geometryType {
        case "Point":
            guard let coordinates = geometry["coordinates"] as? [Any], let coordinate = Self.coordinate(coordinates)
            else {
                return .broken(position: position, problem: "a Point without valid coordinates")
            }
            point = coordinate
        case "Polygon", "MultiPolygon":
            let rings: [Any] =
                geometryType == "Polygon" ? [geometry["coordinates"] as Any] : (geometry["coordinates"] as? [Any] ?? [])
            let outerRings = rings.compactMap { ($0 as? [Any])?.first as? [Any] }
            let vertices = outerRings.flatMap { ring in ring.compactMap { Self.coordinate($0 as? [Any] ?? []) } }
            guard vertices.count >= 3, vertices.count == outerRings.reduce(0, { $0 + $1.count }),
                let json = try? JSONSerialization.data(withJSONObject: geometry, options: [.sortedKeys])
            else { return .broken(position: position, problem: "a \(geometryType) without valid rings") }
            point = Coordinate(
                latitude: vertices.map(\.latitude).reduce(0, +) / Double(vertices.count),
                longitude: vertices.map(\.longitude).reduce(0, +) / Double(vertices.count))
            outline = String(decoding: json, as: UTF8.self)
        default:
            return .skipped(reason: "unsupported geometry \(geometryType)")
        }

        return .place(
            PlaceRecord(
                sourceKey: sourceKey, name: name, kind: kind, subtype: subtype, cuisine: tag("cuisine"),
                address: Address(
                    street: tag("addr:street"), housenumber: tag("addr:housenumber"), postcode: tag("addr:postcode"),
                    city: tag("addr:city")),
                openingHours: tag("opening_hours"), point: point, outlineGeoJSON: outline))
    }

    /// `[lon, lat]` when both are valid degrees.
    static func coordinate(_ pair: [Any]) -> Coordinate? {
        guard pair.count >= 2, let longitude = (pair[0] as? NSNumber)?.doubleValue,
            let latitude = (pair[1] as? NSNumber)?.doubleValue
        else { return nil }
        let coordinate = Coordinate(latitude: latitude, longitude: longitude)
        return coordinate.isValid ? coordinate : nil
    }

    /// `node/123` from `osm_type`+`osm_id`, `@id`, or the feature id (`node/123`, osmium's `n123`, `w45`, and its
    /// area ids: `a<n>` is the area of way n/2 for an even n, of relation (n-1)/2 for an odd one).
    static func sourceKey(feature: [String: Any], properties: [String: Any]) -> String? {
        if let type = properties["osm_type"] as? String, let id = properties["osm_id"] {
            return normalizedKey("\(type)/\(id)")
        }
        if let id = properties["@id"] as? String { return normalizedKey(id) }
        if let id = feature["id"] as? String { return normalizedKey(id) }
        return nil
    }

    private static func normalizedKey(_ raw: String) -> String? {
        let types = ["n": "node", "w": "way", "r": "relation"]
        if let slash = raw.firstIndex(of: "/") {
            let type = raw[..<slash].lowercased()
            let id = raw[raw.index(after: slash)...]
            guard ["node", "way", "relation"].contains(type), !id.isEmpty, id.allSatisfy(\.isNumber) else { return nil }
            return "\(type)/\(id)"
        }
        let id = raw.dropFirst()
        guard let first = raw.first?.lowercased(), !id.isEmpty, id.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            return nil
        }
        if first == "a" {
            guard let area = UInt64(id) else { return nil }
            return area % 2 == 0 ? "way/\(area / 2)" : "relation/\(area / 2)"
        }
        guard let type = types[first] else { return nil }
        return "\(type)/\(id)"
    }
}

/// The file as a whole is not GeoJSON.
package struct GeoJSONError: Error, CustomStringConvertible {
    package let description: String

    init(_ description: String) {
        self.description = description
    }
}
