import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Postgres
import ServiceKit
import TestSupport

@testable import Delivery
@testable import Matching
@testable import MatchingCore

/// The real matching application on a fresh database and vhost, with campus places already in its read model.
struct MatchingTestApp: ServiceTestApp {
    static let migrations = [
        "Services/Matching/Core/Migrations", "Services/Matching/Delivery/Migrations",
        "Services/Matching/Tutoring/Migrations",
        "Services/Matching/Exchange/Migrations", "Services/Matching/Rides/Migrations",
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

    let service: TestService
    let settings: DeliverySettings

    static func make(_ overrides: [String: String] = [:]) async throws -> MatchingTestApp {
        let service = try await TestService.make(
            "matching", migrations: migrations, poolSize: 8,
            environment: ["POSTGRES_POOL_SIZE": "4", "SCHEDULER_INTERVAL_SECONDS": "0.1"].merging(overrides) { $1 })
        try await service.database.pool.transaction { connection in
            for place in [unicafe, porthania, metsatalo, farBuilding] {
                try ReadModels.applyPlace(place, version: 1, isRetired: false, on: connection)
            }
        }
        return MatchingTestApp(
            service: service, settings: try DeliverySettings(service.configuration, logger: Logger(label: "test")))
    }

    var steps: DeliverySteps {
        DeliverySteps(database: service.database.pool, settings: settings)
    }

    func token(for caller: Identity) async throws -> String {
        try await token(caller.userId, campus: caller.campus, name: caller.name)
    }

    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await service.test({ try await buildMatchingApplication($0, logger: $1, flows: matchingFlows) }, body)
    }

    /// `caller` checks in at Unicafe for 30 minutes, heading to `destination`.
    func checkIn(_ caller: Identity, to destination: PlaceSnapshot = porthania, capacity: Int = 1) async throws -> Run {
        try await steps.openRun(
            id: nil, caller: caller, restaurantId: Self.unicafe.placeId, destinationId: destination.placeId,
            capacity: capacity, minutes: 30)
    }

    /// `caller` orders `items` from Unicafe to `destination`, for `run` when given.
    func order(_ caller: Identity, _ items: String, to destination: PlaceSnapshot = porthania, run: UUID? = nil)
        async throws -> Order
    {
        try await steps.placeOrder(
            id: nil, caller: caller, restaurantId: Self.unicafe.placeId, destinationId: destination.placeId,
            items: items, runId: run)
    }

    /// The outbox's events in commit order, with their JSON.
    func events() async throws -> [(type: String, payload: [String: Any])] {
        try await service.database.pool.query("SELECT type, payload::text AS payload FROM outbox ORDER BY seq").map {
            row in
            let text: String = try row.decode("payload")
            return (
                try row.decode("type"),
                (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
            )
        }
    }
}

extension Identity {
    static func student(_ name: String, campus: String = "helsinki.fi") -> Identity {
        Identity(userId: UUID(), campus: campus, name: name)
    }
}
