import Foundation
import Hummingbird
import HummingbirdTesting
import Postgres
import ServiceKit
import TestSupport

@testable import PlaceCatalog
@testable import Places

/// The real places application on a fresh database and vhost, with the campuses every test has (Helsinki and Aalto
/// University at Otaniemi).
struct PlacesTestApp: ServiceTestApp {
    static let bundledData = TestService.repositoryRoot.appendingPathComponent("data/helsinki-centre-places.geojson")
    static let extraFixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/extra.geojsonseq")
    /// A piece of central Helsinki moved onto Otaniemi with new ids (Fixtures/make-otaniemi.py): its places, and the
    /// extract itself for its streets.
    static let otaniemiPlaces = extraFixture.deletingLastPathComponent().appendingPathComponent(
        "otaniemi-places.geojsonseq")
    static let otaniemiStreets = extraFixture.deletingLastPathComponent().appendingPathComponent("otaniemi.osm.pbf")

    let service: TestService
    let importer: PlaceImporter

    static func make() async throws -> PlacesTestApp {
        let service = try await TestService.make("places", migrations: ["Services/Places/Catalog/Migrations"])
        let importer = PlaceImporter(
            repository: PlacePostgresRepository(database: service.database.pool),
            campuses: try CampusDirectory.load(extraFile: service.configuration.campusesFile))
        return PlacesTestApp(service: service, importer: importer)
    }

    /// Imports a file the way `places import` does.
    @discardableResult
    func importFile(_ url: URL, campus: String? = nil, retiresMany: Bool = false) async throws -> PlaceImporter.Summary
    {
        try await importer.importGeoJSON(
            try Data(contentsOf: url), campus: try campus.map(self.campus), retiresMany: retiresMany)
    }

    /// The configured campus of `domain`, as `--campus` names it.
    func campus(_ domain: String) throws -> Campus {
        guard let campus = importer.campuses.campus(forDomain: domain) else { throw TestFailure("no campus \(domain)") }
        return campus
    }

    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await service.test(buildApplication, body)
    }
}

extension TestClientProtocol {
    /// GETs `path` with the token and returns the status and the JSON object.
    func getJSON(_ path: String, token: String?) async throws -> (HTTPResponse.Status, [String: Any]) {
        try await call(.get, path, token: token)
    }

    /// The places of a list answer.
    func places(_ path: String, token: String) async throws -> [[String: Any]] {
        let (status, body) = try await getJSON(path, token: token)
        guard status == .ok else { throw TestFailure("\(path) answered \(status): \(body)") }
        return body["places"] as? [[String: Any]] ?? []
    }
}
