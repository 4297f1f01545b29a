import Crypto
import Foundation
import Logging
import ServiceKit

/// Imports a GeoJSON file: assigns each place its campus, adds and updates what changed, retires what the file no
/// longer has, and reports what it did. Retiring is guarded: a file with broken features or without a valid place
/// retires nothing, and one that would retire more than a fifth of a campus does so only when asked
/// (`retiresMany`); the summary says what would have been retired.
package struct PlaceImporter: Sendable {
    let repository: PlacePostgresRepository
    let campuses: CampusDirectory
    var batchSize = 500

    package init(repository: PlacePostgresRepository, campuses: CampusDirectory) {
        self.repository = repository
        self.campuses = campuses
    }

    /// What an import did, by count; `skipped` by reason.
    package struct Summary: Sendable, Equatable, CustomStringConvertible {
        package var read = 0
        package var added = 0
        package var updated = 0
        package var unchanged = 0
        package var retired = 0
        /// Places the file no longer has that were kept in service, and why.
        package var notRetired = 0
        package var whyNotRetired: String?
        package var skipped: [String: Int] = [:]
        /// Features that could not be read, with their position in the file.
        package var broken: [String] = []

        package var description: String {
            var lines = [
                "read \(read), added \(added), updated \(updated), unchanged \(unchanged), retired \(retired), "
                    + "skipped \(skipped.values.reduce(0, +)), broken \(broken.count)"
            ]
            if let whyNotRetired {
                lines.append("  not retired \(notRetired) places the file does not have: \(whyNotRetired)")
            }
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
    package func importGeoJSON(
        _ data: Data, campus forcedCampus: Campus?, retiresMany: Bool = false, progress: (String) -> Void = { _ in }
    ) async throws -> Summary {
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
            progress(
                "\(summary.read) features read, \(summary.added + summary.updated + summary.unchanged) places stored")
        }

        for outcome in try GeoJSONReader.read(data) {
            summary.read += 1
            switch outcome {
            case .broken(let position, let problem):
                summary.broken.append("\(position): \(problem)")
            case .withoutId(let position):
                summary.broken.append("\(position): no OpenStreetMap id (osm_type and osm_id, @id, or id)")
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
                batch.append(
                    (
                        record, campus.domain, Self.placeId(record.sourceKey),
                        Self.contentHash(record, campus: campus.domain)
                    ))
                if batch.count >= batchSize { try await flush() }
            }
        }
        try await flush()
        let campuses = seenCampuses.sorted()
        let keys = seenKeys.sorted()
        let retirement = try await repository.retirement(campuses: campuses, keeping: keys)
        summary.notRetired = retirement.values.reduce(0) { $0 + $1.missing }
        summary.whyNotRetired = Self.whyNotRetire(summary, retirement, retiresMany: retiresMany)
        if summary.whyNotRetired == nil {
            summary.retired = try await repository.retire(campuses: campuses, keeping: keys)
            summary.notRetired = 0
        } else if summary.notRetired == 0 {
            summary.whyNotRetired = nil
        }
        return summary
    }

    /// The share of a campus past which an import retires only when asked.
    static let retirementThreshold = 0.2

    /// Why the places missing from the file must stay, or nil when retiring them is safe.
    static func whyNotRetire(
        _ summary: Summary, _ retirement: [String: (missing: Int, total: Int)], retiresMany: Bool
    ) -> String? {
        if !summary.broken.isEmpty {
            return "the file has broken features, so it may lack places that still exist"
        }
        if summary.added + summary.updated + summary.unchanged == 0 {
            return "the file holds no valid place"
        }
        let many = retirement.filter { Double($0.value.missing) > Double($0.value.total) * retirementThreshold }
        if !retiresMany, !many.isEmpty {
            let counts = many.sorted { $0.key < $1.key }.map { "\($0.value.missing) of \($0.value.total) on \($0.key)" }
            return
                "that is \(counts.joined(separator: ", ")), more than a fifth; run again with --retire-many to retire them"
        }
        return nil
    }

    /// A name-based (version 5 style) UUID of the OpenStreetMap object, so that it keeps its id across imports.
    static func placeId(_ sourceKey: String) -> UUID {
        var bytes = Array(Insecure.SHA1.hash(data: Data(("tarrare.place:" + sourceKey).utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
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
