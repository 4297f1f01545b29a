import Foundation

/// An OpenStreetMap way with a `highway` tag, as `osmium export` writes it: its id, tags and points.
package struct StreetWay: Sendable, Equatable {
    package var sourceKey: String
    package var tags: [String: String]
    /// `[lon, lat]` pairs in the way's order; an area's outer ring.
    package var coordinates: [[Double]]
    package var isArea: Bool
}

/// Who may use a way, which way, and how fast a car goes on it, read from its tags.
package struct StreetAccess: Sendable, Equatable {
    package var isWalkable: Bool
    /// A car may go from the way's first point towards its last.
    package var drivesForward: Bool
    package var drivesBackward: Bool
    package var kilometersPerHour: Double

    package var isDrivable: Bool { drivesForward || drivesBackward }

    static let walkableHighways: Set<String> = [
        "footway", "path", "pedestrian", "steps", "living_street", "residential", "service", "unclassified",
        "tertiary", "tertiary_link", "secondary", "secondary_link", "primary", "primary_link", "trunk", "trunk_link",
        "track", "cycleway", "corridor", "trail", "platform", "crossing", "elevator", "bridleway", "road",
    ]
    /// Default speeds by road class where the way has no `maxspeed` (central Helsinki: mostly 30 and 40 km/h).
    static let drivableHighways: [String: Double] = [
        "motorway": 100, "motorway_link": 60, "trunk": 60, "trunk_link": 40, "primary": 40, "primary_link": 30,
        "secondary": 40, "secondary_link": 30, "tertiary": 40, "tertiary_link": 30, "unclassified": 30,
        "residential": 30, "living_street": 20, "service": 20, "road": 30,
    ]
    static let yes: Set<String> = ["yes", "designated", "permissive", "destination", "customers"]
    static let no: Set<String> = [
        "no", "private", "agricultural", "forestry", "delivery", "emergency", "bus", "psv", "use_sidepath",
    ]

    /// What `tags` allow; nil for a way nobody may walk or drive along.
    package static func of(_ tags: [String: String], isArea: Bool = false) -> StreetAccess? {
        guard let highway = tags["highway"] else { return nil }
        let access = tags["access"]
        let foot = tags["foot"]
        let isWalkable: Bool
        if let foot, yes.contains(foot) {
            isWalkable = walkableHighways.contains(highway) || drivableHighways[highway] != nil
        } else {
            isWalkable =
                walkableHighways.contains(highway) && foot.map { !no.contains($0) } ?? true
                && access.map { !no.contains($0) } ?? true
        }
        // The most specific of the tags that is present decides whether cars may use the way.
        let car = tags["motorcar"] ?? tags["motor_vehicle"] ?? tags["vehicle"] ?? access
        var forward = false
        var backward = false
        if let speed = drivableHighways[highway], !isArea, car.map({ !no.contains($0) }) ?? true {
            switch tags["oneway"] {
            case "yes", "true", "1": forward = true
            case "-1", "reverse": backward = true
            case "no", "false", "0": (forward, backward) = (true, true)
            case "reversible", "alternating": break
            default:
                let isImpliedOneway =
                    ["roundabout", "circular"].contains(tags["junction"] ?? "") || highway.hasPrefix("motorway")
                (forward, backward) = (true, !isImpliedOneway)
            }
            guard isWalkable || forward || backward else { return nil }
            return StreetAccess(
                isWalkable: isWalkable, drivesForward: forward, drivesBackward: backward,
                kilometersPerHour: maxspeed(tags["maxspeed"]) ?? speed)
        }
        guard isWalkable else { return nil }
        return StreetAccess(isWalkable: true, drivesForward: false, drivesBackward: false, kilometersPerHour: 0)
    }

    /// `maxspeed` in km/h: `40`, `20 mph`, `FI:urban`; nil when it says no number.
    static func maxspeed(_ raw: String?) -> Double? {
        guard let raw else { return nil }
        switch raw {
        case "FI:urban": return 50
        case "FI:rural": return 80
        case "walk": return 6
        default: break
        }
        let digits = raw.prefix { $0.isNumber || $0 == "." }
        guard let value = Double(digits), value > 0 else { return nil }
        return raw.hasSuffix("mph") ? value * 1.609 : value
    }
}

/// A campus's street network: its ways cut at every junction (a point two ways share, or a way's end) into edges
/// between numbered vertices, ready for pgRouting.
package struct StreetNetwork: Sendable {
    package struct Vertex: Sendable, Encodable, Equatable {
        package var id: Int64
        package var lon: Double
        package var lat: Double
    }

    package struct Edge: Sendable, Encodable, Equatable {
        package var id: Int64
        package var source: Int64
        package var target: Int64
        package var sourceKey: String
        package var name: String?
        package var isWalkable: Bool
        package var drivesForward: Bool
        package var drivesBackward: Bool
        package var kilometersPerHour: Double
        package var line: Route.LineString
    }

    package var vertices: [Vertex] = []
    package var edges: [Edge] = []

    /// Ids follow the order of `ways`, so that the same ways make the same network.
    package init(ways: [StreetWay]) {
        let usable = ways.compactMap { way in
            StreetAccess.of(way.tags, isArea: way.isArea).map { (way, $0) }
        }.filter { $0.0.coordinates.count >= 2 }
        var uses: [[Double]: Int] = [:]
        for (way, _) in usable {
            for (index, point) in way.coordinates.enumerated() {
                uses[point, default: 0] += index == 0 || index == way.coordinates.count - 1 ? 2 : 1
            }
        }
        var vertexIds: [[Double]: Int64] = [:]
        func vertex(_ point: [Double]) -> Int64 {
            if let id = vertexIds[point] { return id }
            let id = Int64(vertices.count + 1)
            vertexIds[point] = id
            vertices.append(Vertex(id: id, lon: point[0], lat: point[1]))
            return id
        }
        for (way, access) in usable {
            var start = 0
            for index in 1..<way.coordinates.count
            where index == way.coordinates.count - 1 || uses[way.coordinates[index], default: 0] > 1 {
                let stretch = Array(way.coordinates[start...index])
                start = index
                guard stretch.count > 2 || stretch[0] != stretch[1] else { continue }
                edges.append(
                    Edge(
                        id: Int64(edges.count + 1), source: vertex(stretch[0]),
                        target: vertex(stretch[stretch.count - 1]),
                        sourceKey: way.sourceKey, name: way.tags["name"], isWalkable: access.isWalkable,
                        drivesForward: access.drivesForward, drivesBackward: access.drivesBackward,
                        kilometersPerHour: access.kilometersPerHour, line: Route.LineString(coordinates: stretch)))
            }
        }
    }

    /// The ways of an `osmium export -f geojsonseq -a type,id` file: lines and areas with a `highway` tag.
    package static func ways(geoJSONSequence data: Data) throws -> [StreetWay] {
        var ways: [StreetWay] = []
        for line in data.split(separator: UInt8(ascii: "\n")) {
            let json = line.drop { $0 == 0x1E }
            guard !json.isEmpty,
                let feature = try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any],
                let properties = feature["properties"] as? [String: Any],
                let geometry = feature["geometry"] as? [String: Any]
            else { continue }
            let tags = properties.compactMapValues { $0 as? String }.filter { !$0.key.hasPrefix("@") }
            guard tags["highway"] != nil, let type = properties["@type"] as? String,
                let id = (properties["@id"] as? NSNumber)?.int64Value
            else { continue }
            let coordinates: Any?
            let isArea: Bool
            switch geometry["type"] as? String {
            case "LineString": (coordinates, isArea) = (geometry["coordinates"], false)
            case "Polygon": (coordinates, isArea) = ((geometry["coordinates"] as? [Any])?.first, true)
            case "MultiPolygon":
                (coordinates, isArea) = (((geometry["coordinates"] as? [Any])?.first as? [Any])?.first, true)
            default: continue
            }
            guard let points = (coordinates as? [[NSNumber]])?.map({ $0.map(\.doubleValue) }),
                points.allSatisfy({ $0.count >= 2 })
            else { continue }
            ways.append(
                StreetWay(
                    sourceKey: "\(type)/\(id)", tags: tags, coordinates: points.map { [$0[0], $0[1]] }, isArea: isArea))
        }
        return ways
    }
}
