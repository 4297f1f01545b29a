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

        public func contains(_ point: Point) -> Bool {
            (minLatitude...maxLatitude).contains(point.latitude)
                && (minLongitude...maxLongitude).contains(point.longitude)
        }
    }

    public var domain: String
    public var name: String
    public var center: Point
    public var bounds: Bounds
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
