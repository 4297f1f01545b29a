import Foundation

/// A campus one can sign up with; its email domain decides who belongs to it.
struct Campus: Codable, Sendable, Equatable {
    struct Point: Codable, Sendable, Equatable {
        var latitude: Double
        var longitude: Double
    }

    struct Bounds: Codable, Sendable, Equatable {
        var minLatitude: Double
        var minLongitude: Double
        var maxLatitude: Double
        var maxLongitude: Double
    }

    var domain: String
    var name: String
    var center: Point
    var bounds: Bounds
}

/// The configured campuses, by email domain.
struct CampusDirectory: Sendable {
    let campuses: [String: Campus]

    init(_ campuses: [Campus]) {
        self.campuses = Dictionary(campuses.map { ($0.domain.lowercased(), $0) }, uniquingKeysWith: { $1 })
    }

    /// The bundled campuses, plus (overriding by domain) those of the JSON file at `extraFile`.
    static func load(extraFile: String?) throws -> CampusDirectory {
        let bundled = Bundle.module.url(forResource: "campuses", withExtension: "json")!
        var campuses = try JSONDecoder().decode([Campus].self, from: Data(contentsOf: bundled))
        if let extraFile {
            campuses += try JSONDecoder().decode([Campus].self, from: Data(contentsOf: URL(fileURLWithPath: extraFile)))
        }
        return CampusDirectory(campuses)
    }

    /// The campus of an email domain, also for its subdomains (`cs.helsinki.fi` belongs to `helsinki.fi`).
    func campus(forDomain domain: String) -> Campus? {
        var labels = domain.lowercased().split(separator: ".")
        while labels.count >= 2 {
            if let campus = campuses[labels.joined(separator: ".")] { return campus }
            labels.removeFirst()
        }
        return nil
    }

    var all: [Campus] { campuses.values.sorted { $0.domain < $1.domain } }
}
