import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
@testable import Delivery
@testable import Matching
@testable import MatchingCore
import Messaging
import Postgres
import ServiceKit
import TestSupport

/// The real matching application on a fresh database and vhost, with campus places already in its read model.
struct MatchingTestApp {
    static let migrations = [
        PostgresMigrator.messagingDirectory,
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Services/Matching/Core/Migrations"),
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Services/Matching/Tutoring/Migrations"),
    ]

    /// Fixture places around the Helsinki campus: Porthania and Metsätalo are 285 m apart.
    static let unicafe = PlaceSnapshot(
        placeId: UUID(), campus: "helsinki.fi", name: "Unicafe Porthania", kind: "restaurant", subtype: "cafe",
        latitude: 60.17008, longitude: 24.94891)
    static let porthania = PlaceSnapshot(
        placeId: UUID(), campus: "helsinki.fi", name: "Porthania", kind: "building", subtype: "university",
        latitude: 60.17018, longitude: 24.94841)
    static let metsatalo = PlaceSnapshot(
        placeId: UUID(), campus: "helsinki.fi", name: "Metsätalo", kind: "building", subtype: "university",
        latitude: 60.17265, longitude: 24.94978)
    static let farBuilding = PlaceSnapshot(
        placeId: UUID(), campus: "helsinki.fi", name: "Kallion kirjasto", kind: "building", subtype: nil,
        latitude: 60.1840, longitude: 24.9500)

    let database: TestDatabase
    let broker: TestBroker
    let privateKey: EdDSA.PrivateKey
    let configuration: ServiceConfiguration
    let settings: DeliverySettings

    static func make(_ overrides: [String: String] = [:]) async throws -> MatchingTestApp {
        let database = try await TestDatabase.make(migrations: migrations, poolSize: 8)
        try await database.pool.transaction { connection in
            for place in [unicafe, porthania, metsatalo, farBuilding] {
                try ReadModels.applyPlace(place, version: 1, isRetired: false, on: connection)
            }
        }
        let privateKey = try EdDSA.PrivateKey()
        let broker = try await TestBroker.make()
        let environment = [
            "POSTGRES_URL": database.url, "AMQP_URL": broker.url, "POSTGRES_POOL_SIZE": "4",
            "JWT_PUBLIC_KEY": privateKey.publicKey.pemRepresentation, "LOG_LEVEL": "warning",
            "SCHEDULER_INTERVAL_SECONDS": "0.1",
        ].merging(overrides) { $1 }
        let configuration = try ServiceConfiguration(service: "matching", defaultPort: 0, environment: environment)
        return MatchingTestApp(
            database: database, broker: broker, privateKey: privateKey, configuration: configuration,
            settings: try DeliverySettings(configuration))
    }

    var repository: DeliveryPostgresRepository {
        DeliveryPostgresRepository(database: database.pool, settings: settings)
    }

    func token(for caller: Caller) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(eddsa: privateKey)
        return try await keys.sign(
            AccessTokenClaims(
                userId: caller.userId, campus: caller.campus, name: caller.name, issuer: "tarrare-accounts",
                audience: "tarrare", issuedAt: Date(), lifetime: 900))
    }

    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let app = try await buildApplication(configuration, logger: TestEnvironment.logger)
        try await app.test(.router, body)
        try? await broker.delete()
    }

    /// The outbox's events in commit order, with their JSON.
    /// `caller` checks in at Unicafe for 30 minutes, heading to `destination`.
    func checkIn(_ caller: Caller, to destination: PlaceSnapshot = porthania, capacity: Int = 1) async throws -> Run {
        try await repository.openRun(
            id: nil, caller: caller, restaurantId: Self.unicafe.placeId, destinationId: destination.placeId,
            capacity: capacity, minutes: 30)
    }

    /// `caller` orders `items` from Unicafe to `destination`, for `run` when given.
    func order(_ caller: Caller, _ items: String, to destination: PlaceSnapshot = porthania, run: UUID? = nil)
        async throws -> Order
    {
        try await repository.placeOrder(
            id: nil, caller: caller, restaurantId: Self.unicafe.placeId, destinationId: destination.placeId,
            items: items, runId: run)
    }

    func events() async throws -> [(type: String, payload: [String: Any])] {
        try await database.pool.query("SELECT type, payload::text AS payload FROM outbox ORDER BY seq").map { row in
            let text: String = try row.decode("payload")
            return (
                try row.decode("type"),
                (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
            )
        }
    }
}

extension Caller {
    static func student(_ name: String, campus: String = "helsinki.fi") -> Caller {
        Caller(userId: UUID(), campus: campus, name: name)
    }
}

extension TestClientProtocol {
    /// Sends JSON (or nothing) with the caller's token; returns the status and the JSON object answered.
    func call(
        _ method: HTTPRequest.Method, _ path: String, token: String, body: [String: Any]? = nil
    ) async throws -> (HTTPResponse.Status, [String: Any]) {
        var headers: HTTPFields = [.authorization: "Bearer \(token)"]
        var buffer: ByteBuffer?
        if let body {
            headers[.contentType] = "application/json"
            buffer = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body))
        }
        return try await execute(uri: path, method: method, headers: headers, body: buffer) { response in
            (response.status, (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any] ?? [:])
        }
    }
}
