import Foundation
import ServiceKit

/// Imports the street network of an OpenStreetMap extract (`.osm.pbf`, `.osm`): `osmium` (Debian's osmium-tool) picks
/// the ways with a `highway` tag and exports them, each campus gets the ways that touch its bounds, and each campus's
/// network is replaced whole, in one transaction: a route asked meanwhile uses the old network or the new one.
package struct StreetImporter: Sendable {
    let repository: RoutePostgresRepository
    let campuses: CampusDirectory

    package init(repository: RoutePostgresRepository, campuses: CampusDirectory) {
        self.repository = repository
        self.campuses = campuses
    }

    /// What an import did for each campus, by campus.
    package struct Summary: Sendable, CustomStringConvertible {
        package var ways = 0
        package var networks: [String: RoutePostgresRepository.NetworkSummary] = [:]

        package var description: String {
            (["streets: \(ways) ways"]
                + networks.sorted { $0.key < $1.key }.map { "  \($0.key): \($0.value)" }).joined(separator: "\n")
        }
    }

    /// Imports the streets of `extract`; with `campus`, every way belongs to it. A campus the extract has no street
    /// of keeps its network.
    package func importStreets(_ extract: URL, campus forcedCampus: Campus?) async throws -> Summary {
        let ways = try StreetNetwork.ways(geoJSONSequence: try await Self.export(extract))
        var byCampus: [String: [StreetWay]] = [:]
        for way in ways {
            if let forcedCampus {
                byCampus[forcedCampus.domain, default: []].append(way)
                continue
            }
            var seen = Set<String>()
            for point in way.coordinates {
                guard let campus = campuses.campus(containing: .init(latitude: point[1], longitude: point[0])),
                    seen.insert(campus.domain).inserted
                else { continue }
                byCampus[campus.domain, default: []].append(way)
            }
        }
        var summary = Summary(ways: ways.count)
        for (campus, ways) in byCampus.sorted(by: { $0.key < $1.key }) {
            let network = StreetNetwork(ways: ways)
            guard !network.edges.isEmpty else { continue }
            summary.networks[campus] = try await repository.replaceNetwork(network, campus: campus)
        }
        return summary
    }

    /// The extract's `highway` ways as a GeoJSON text sequence, made by osmium in a directory of its own.
    static func export(_ extract: URL) async throws -> Data {
        guard FileManager.default.isReadableFile(atPath: extract.path) else {
            throw StreetImportError("cannot read \(extract.path)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("streets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let highways = directory.appendingPathComponent("highways.osm.pbf").path
        let exported = directory.appendingPathComponent("highways.geojsonseq").path
        try await osmium(["tags-filter", extract.path, "w/highway", "--overwrite", "-o", highways])
        try await osmium([
            "export", highways, "-f", "geojsonseq", "-a", "type,id", "--geometry-types=linestring,polygon",
            "--overwrite", "-o", exported,
        ])
        return try Data(contentsOf: URL(fileURLWithPath: exported))
    }

    private static func osmium(_ arguments: [String]) async throws {
        let status: Int32
        let message: String
        do {
            (status, message) = try await ChildProcess.run(["osmium"] + arguments, capturing: .standardError)
        } catch {
            throw StreetImportError("osmium is not installed (Debian's osmium-tool): \(error)")
        }
        guard status == 0 else {
            let reason = message.split(separator: "\n").last.map(String.init) ?? "exit \(status)"
            throw StreetImportError("osmium \(arguments[0]) failed: \(reason)")
        }
    }
}

/// A street import that could not run, with a one-line reason.
package struct StreetImportError: Error, CustomStringConvertible {
    package var description: String

    init(_ description: String) { self.description = description }
}
