import Crypto
import Foundation
import Logging
import ServiceKit

/// Imports a GeoJSON file: assigns each place its campus, adds and updates what changed, retires what the file no
/// longer has, and reports what it did.
struct PlaceImporter: Sendable {
    let repository: PlacePostgresRepository
    let campuses: CampusDirectory
    var batchSize = 500

    /// What an import did, by count; `skipped` by reason.
    struct Summary: Sendable, Equatable, CustomStringConvertible {
        var read = 0
        var added = 0
        var updated = 0
        var unchanged = 0
        var retired = 0
        var skipped: [String: Int] = [:]
        /// Features that could not be read, with their position in the file.
        var broken: [String] = []

        var description: String {
            var lines = [
                "read \(read), added \(added), updated \(updated), unchanged \(unchanged), retired \(retired), "
                    + "skipped \(skipped.values.reduce(0, +)), broken \(broken.count)"
            ]
            for (reason, count) in skipped.sorted(by: { $0.key < $1.key }) {
                lines.append("  skipped \(count): \(reason)")
            }
            for problem in broken.prefix(20) {
                lines.append("  broken: \(problem)")
            }
            if broken.count > 20 { lines.append("  … and \(broken.count - 20) more broken features") }
            return lines.joined(separator: "\n")
        }
    }

    /// Imports `data`; with `campus`, every place belongs to it, otherwise to the campus whose bounds hold it.
    func importGeoJSON(_ data: Data, campus forcedCampus: Campus?, progress: (String) -> Void = { _ in }) async throws
        -> Summary
    {
        var summary = Summary()
        var batch: [(record: PlaceRecord, campus: String, id: UUID, hash: String)] = []
        var seenKeys = Set<String>()
        var seenCampuses = Set<String>()
        if let forcedCampus { seenCampuses.insert(forcedCampus.domain) }

        func flush() async throws {
            guard !batch.isEmpty else { return }
            for result in try await repository.upsert(batch) {
                switch result {
                case .added: summary.added += 1
                case .updated: summary.updated += 1
                case .unchanged: summary.unchanged += 1
                }
            }
            batch.removeAll(keepingCapacity: true)
            progress("\(summary.read) features read, \(summary.added + summary.updated + summary.unchanged) places stored")
        }

        for outcome in try GeoJSONReader.read(data) {
            summary.read += 1
            switch outcome {
            case .broken(let position, let problem):
                summary.broken.append("\(position): \(problem)")
            case .skipped(let reason):
                summary.skipped[reason, default: 0] += 1
            case .place(let record):
                let point = Campus.Point(latitude: record.point.latitude, longitude: record.point.longitude)
                guard let campus = forcedCampus ?? campuses.campus(containing: point) else {
                    summary.skipped["outside every campus", default: 0] += 1
                    continue
                }
                guard seenKeys.insert(record.sourceKey).inserted else {
                    summary.skipped["the same object twice", default: 0] += 1
                    continue
                }
                seenCampuses.insert(campus.domain)
                batch.append((record, campus.domain, Self.placeId(record.sourceKey), Self.contentHash(record, campus: campus.domain)))
                if batch.count >= batchSize { try await flush() }
            }
        }
        try await flush()
        summary.retired = try await repository.retire(campuses: seenCampuses.sorted(), keeping: seenKeys.sorted())
        return summary
    }

    /// A name-based (version 5 style) UUID of the OpenStreetMap object, so that it keeps its id across imports.
    static func placeId(_ sourceKey: String) -> UUID {
        var bytes = Array(Insecure.SHA1.hash(data: Data(("tarrare.place:" + sourceKey).utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// Changes whenever anything the service stores of the place changes.
    static func contentHash(_ record: PlaceRecord, campus: String) -> String {
        let fields: [String?] = [
            campus, record.name, record.kind.rawValue, record.subtype, record.cuisine, record.address.street,
            record.address.housenumber, record.address.postcode, record.address.city, record.openingHours,
            "\(record.point.latitude),\(record.point.longitude)", record.outlineGeoJSON,
        ]
        let canonical = fields.map { $0.map { "+" + $0 } ?? "-" }.joined(separator: "\u{1F}")
        return SHA256.hash(data: Data(canonical.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
