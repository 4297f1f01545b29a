import Foundation

/// A campus one can sign up with; its email domain decides who belongs to it.
public struct Campus: Codable, Sendable, Equatable {
    public struct Point: Codable, Sendable, Equatable {
        public var latitude: Double
        public var longitude: Double

        public init(latitude: Double, longitude: Double) {
            self.latitude = latitude
            self.longitude = longitude
        }
    }

    public struct Bounds: Codable, Sendable, Equatable {
        public var minLatitude: Double
        public var minLongitude: Double
        public var maxLatitude: Double
        public var maxLongitude: Double

        public init(minLatitude: Double, minLongitude: Double, maxLatitude: Double, maxLongitude: Double) {
            self.minLatitude = minLatitude
            self.minLongitude = minLongitude
            self.maxLatitude = maxLatitude
            self.maxLongitude = maxLongitude
        }

        public func contains(_ point: Point) -> Bool {
            (minLatitude...maxLatitude).contains(point.latitude)
                && (minLongitude...maxLongitude).contains(point.longitude)
        }
    }

    public var domain: String
    public var name: String
    public var center: Point
    public var bounds: Bounds
    /// How far from the box a ride's drop-off may lie: a ride from the campus may go home to the suburbs.
    public var dropoffRadiusMeters: Double
    /// How far from the box a driver may be and still be offered the campus's rides: one who drives in is near it.
    public var marginMeters: Double

    public static let defaultDropoffRadiusMeters = 30_000.0
    public static let defaultMarginMeters = 2_000.0

    public init(
        domain: String, name: String, center: Point, bounds: Bounds,
        dropoffRadiusMeters: Double = Campus.defaultDropoffRadiusMeters,
        marginMeters: Double = Campus.defaultMarginMeters
    ) {
        self.domain = domain
        self.name = name
        self.center = center
        self.bounds = bounds
        self.dropoffRadiusMeters = dropoffRadiusMeters
        self.marginMeters = marginMeters
    }

    /// Whether `point` lies on the campus's box.
    public func contains(_ point: Point) -> Bool {
        bounds.contains(point)
    }

    /// The distance in metres from `point` to the campus's box: 0 inside it, else the haversine distance to the
    /// nearest point of the box. NB: that point is taken as `point` clamped to the box's latitudes and longitudes,
    /// which is off by well under a metre at the tens of kilometres that matter here.
    public func distanceMeters(to point: Point) -> Double {
        let nearest = Point(
            latitude: min(max(point.latitude, bounds.minLatitude), bounds.maxLatitude),
            longitude: min(max(point.longitude, bounds.minLongitude), bounds.maxLongitude))
        return nearest.haversineMeters(to: point)
    }
}

extension Campus {
    enum CodingKeys: String, CodingKey {
        case domain, name, center, bounds, dropoffRadiusMeters, marginMeters
    }

    /// A campus from JSON; files written before the drop-off radius and the margin existed get their defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            domain: try container.decode(String.self, forKey: .domain),
            name: try container.decode(String.self, forKey: .name),
            center: try container.decode(Point.self, forKey: .center),
            bounds: try container.decode(Bounds.self, forKey: .bounds),
            dropoffRadiusMeters: try container.decodeIfPresent(Double.self, forKey: .dropoffRadiusMeters)
                ?? Campus.defaultDropoffRadiusMeters,
            marginMeters: try container.decodeIfPresent(Double.self, forKey: .marginMeters)
                ?? Campus.defaultMarginMeters)
    }
}

extension Campus.Point {
    /// The mean radius of the Earth, in metres.
    static let earthRadiusMeters = 6_371_008.8

    /// The great-circle distance to `other` on a sphere of the Earth's mean radius.
    public func haversineMeters(to other: Campus.Point) -> Double {
        let radians = Double.pi / 180
        let (lat1, lat2) = (latitude * radians, other.latitude * radians)
        let halfLatitude = (lat2 - lat1) / 2
        let halfLongitude = (other.longitude - longitude) * radians / 2
        let a = sin(halfLatitude) * sin(halfLatitude) + cos(lat1) * cos(lat2) * sin(halfLongitude) * sin(halfLongitude)
        return 2 * Self.earthRadiusMeters * asin(min(1, a.squareRoot()))
    }
}

/// The configured campuses, by email domain: the bundled ones plus those of `CAMPUSES_FILE`.
public struct CampusDirectory: Sendable {
    let campuses: [String: Campus]

    public init(_ campuses: [Campus]) {
        self.campuses = Dictionary(campuses.map { ($0.domain.lowercased(), $0) }, uniquingKeysWith: { $1 })
    }

    /// The bundled campuses, plus (overriding by domain) those of the JSON file at `extraFile`.
    public static func load(extraFile: String?) throws -> CampusDirectory {
        let bundled = Bundle.module.url(forResource: "campuses", withExtension: "json")!
        var campuses = try JSONDecoder().decode([Campus].self, from: Data(contentsOf: bundled))
        if let extraFile {
            campuses += try JSONDecoder().decode([Campus].self, from: Data(contentsOf: URL(fileURLWithPath: extraFile)))
        }
        return CampusDirectory(campuses)
    }

    /// The campus of an email domain, also for its subdomains (`cs.helsinki.fi` belongs to `helsinki.fi`).
    public func campus(forDomain domain: String) -> Campus? {
        var labels = domain.lowercased().split(separator: ".")
        while labels.count >= 2 {
            if let campus = campuses[labels.joined(separator: ".")] { return campus }
            labels.removeFirst()
        }
        return nil
    }

    public var all: [Campus] { campuses.values.sorted { $0.domain < $1.domain } }

    /// The campus whose bounding box holds `point`, if any.
    public func campus(containing point: Campus.Point) -> Campus? {
        all.first { $0.bounds.contains(point) }
    }
}
