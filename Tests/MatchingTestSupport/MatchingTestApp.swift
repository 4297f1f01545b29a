import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import MatchingCore
import Messaging
import Postgres
import ServiceKit
import TestSupport

/// The real matching application with the flows a test target gives it, on a fresh database and vhost, with campus
/// places already in its read model.
public struct MatchingTestApp: ServiceTestApp, Sendable {
    /// Fixture places around the Helsinki campus: Porthania and Metsätalo are 285 m apart.
    public static let unicafe = PlaceSnapshot(
        placeId: UUID(), campus: "helsinki.fi", name: "Unicafe Porthania", kind: "restaurant", subtype: "cafe",
        latitude: 60.17008, longitude: 24.94891)
    public static let porthania = PlaceSnapshot(
        placeId: UUID(), campus: "helsinki.fi", name: "Porthania", kind: "building", subtype: "university",
        latitude: 60.17018, longitude: 24.94841)
    public static let metsatalo = PlaceSnapshot(
        placeId: UUID(), campus: "helsinki.fi", name: "Metsätalo", kind: "building", subtype: "university",
        latitude: 60.17265, longitude: 24.94978)
    public static let farBuilding = PlaceSnapshot(
        placeId: UUID(), campus: "helsinki.fi", name: "Kallion kirjasto", kind: "building", subtype: nil,
        latitude: 60.1840, longitude: 24.9500)

    public let service: TestService
    public let flows: [any MatchingFlow.Type]

    /// Matching with `flows`; `overrides` adds to or replaces its environment.
    public static func make(flows: [any MatchingFlow.Type], _ overrides: [String: String] = [:]) async throws
        -> MatchingTestApp
    {
        // A delivery offer and a round of ride offers last ten minutes unless a test sets them: with every suite at
        // once, a test's steps have taken longer than the 25 s and 15 s defaults, so an accept found its offer expired
        // and a ride's second round offered it to drivers the test counted once.
        let defaults = [
            "POSTGRES_POOL_SIZE": "4", "SCHEDULER_INTERVAL_SECONDS": "0.1", "DELIVERY_OFFER_WINDOW_SECONDS": "600",
            "RIDES_OFFER_WINDOW_SECONDS": "600",
        ]
        let service = try await TestService.make(
            "matching", directories: [MatchingMigrations.directory] + flows.compactMap { $0.migrations }, poolSize: 8,
            environment: defaults.merging(overrides) { $1 })
        try await service.database.pool.transaction { connection in
            for place in [unicafe, porthania, metsatalo, farBuilding] {
                try ReadModels.applyPlace(place, version: 1, isRetired: false, on: connection)
            }
        }
        return MatchingTestApp(service: service, flows: flows)
    }

    public func token(for caller: Identity) async throws -> String {
        try await token(caller.userId, campus: caller.campus, name: caller.name)
    }

    public func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let flows = flows
        try await service.test({ try await buildMatchingApplication($0, logger: $1, flows: flows) }, body)
    }

    /// Applies another service's event in one transaction as matching's consumer would, with the app's flows; fails
    /// when matching does not handle it.
    public func applyAsConsumer(_ event: some Event) async throws {
        let handlers = ReadModels.handlers(flows: flows, configuration: service.configuration)
        guard try await service.database.pool.transaction({ try handlers.apply(event, on: $0) }) else {
            throw TestFailure("matching has no handler of \(type(of: event).type)")
        }
    }

    /// The outbox's events in commit order, with their JSON.
    public func events() async throws -> [(type: String, payload: [String: Any])] {
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
    public static func student(_ name: String, campus: String = "helsinki.fi") -> Identity {
        Identity(userId: UUID(), campus: campus, name: name)
    }
}
