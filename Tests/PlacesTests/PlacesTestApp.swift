import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import Messaging
import Postgres
@testable import PlaceCatalog
@testable import Places
import ServiceKit
import TestSupport

/// The real places application on a fresh database (with the bundled Helsinki places imported) and vhost.
struct PlacesTestApp {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let bundledData = repositoryRoot.appendingPathComponent("data/helsinki-centre-places.geojson")
    static let extraFixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/extra.geojsonseq")

    let database: TestDatabase
    let broker: TestBroker
    let privateKey: EdDSA.PrivateKey
    let configuration: ServiceConfiguration
    let importer: PlaceImporter

    static func make() async throws -> PlacesTestApp {
        let database = try await TestDatabase.make(
            migrations: [
                PostgresMigrator.messagingDirectory, repositoryRoot.appendingPathComponent("Services/Places/Catalog/Migrations"),
            ])
        let privateKey = try EdDSA.PrivateKey()
        let broker = try await TestBroker.make()
        let configuration = try ServiceConfiguration(
            service: "places", defaultPort: 0,
            environment: [
                "POSTGRES_URL": database.url, "AMQP_URL": broker.url, "POSTGRES_POOL_SIZE": "2",
                "JWT_PUBLIC_KEY": privateKey.publicKey.pemRepresentation, "LOG_LEVEL": "warning",
            ])
        let importer = PlaceImporter(
            repository: PlacePostgresRepository(database: database.pool), campuses: try CampusDirectory.load(extraFile: nil))
        return PlacesTestApp(
            database: database, broker: broker, privateKey: privateKey, configuration: configuration, importer: importer)
    }

    /// Imports a file the way `places import` does.
    @discardableResult
    func importFile(_ url: URL, campus: String? = nil, retiresMany: Bool = false) async throws -> PlaceImporter.Summary {
        let campus = try campus.map { domain in
            guard let campus = importer.campuses.campus(forDomain: domain) else { throw TestFailure("no campus \(domain)") }
            return campus
        }
        return try await importer.importGeoJSON(try Data(contentsOf: url), campus: campus, retiresMany: retiresMany)
    }

    /// An access token of a student of `campus`.
    func token(campus: String = "helsinki.fi") async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(eddsa: privateKey)
        return try await keys.sign(
            AccessTokenClaims(
                userId: UUID(), campus: campus, name: "Test", issuer: "tarrare-accounts", audience: "tarrare",
                issuedAt: Date(), lifetime: 900))
    }

    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let app = try await buildApplication(configuration, logger: TestEnvironment.logger)
        try await app.test(.router, body)
        try? await broker.delete()
    }
}

extension TestClientProtocol {
    /// GETs `path` with the token and returns the status and the JSON object.
    func getJSON(_ path: String, token: String?) async throws -> (HTTPResponse.Status, [String: Any]) {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await execute(uri: path, method: .get, headers: headers) { response in
            (response.status, (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any] ?? [:])
        }
    }

    /// The places of a list answer.
    func places(_ path: String, token: String) async throws -> [[String: Any]] {
        let (status, body) = try await getJSON(path, token: token)
        guard status == .ok else { throw TestFailure("\(path) answered \(status): \(body)") }
        return body["places"] as? [[String: Any]] ?? []
    }
}
