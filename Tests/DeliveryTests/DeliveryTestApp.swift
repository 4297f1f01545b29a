import Contracts
import Foundation
import Logging
import MatchingCore
import MatchingTestSupport
import ServiceKit
import Testing

@testable import Delivery

extension MatchingTestApp {
    /// Matching with the delivery flow alone: the flow needs nothing of the others.
    static func make(_ overrides: [String: String] = [:]) async throws -> MatchingTestApp {
        try await make(flows: [DeliveryFlow.self], overrides)
    }

    /// The flow's settings, as the application read them.
    var settings: DeliverySettings {
        get throws { try DeliverySettings(service.configuration, logger: Logger(label: "test")) }
    }

    var steps: DeliverySteps {
        get throws { DeliverySteps(database: service.database.pool, settings: try settings) }
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
            id: nil, caller: caller, restaurantIds: [Self.unicafe.placeId], destination: .building(destination.placeId),
            items: items, runId: run)
    }

    /// Expects the order matched once: one active match, no pending offer.
    func expectOneActiveMatch(of orderId: UUID) async throws {
        let matches: Int = try await service.database.pool.query(
            "SELECT count(*) AS n FROM matches WHERE order_id = \(orderId) AND status = 'active'"
        ).first!.decode("n")
        let status: String = try await service.database.pool.query("SELECT status FROM orders WHERE id = \(orderId)")
            .first!.decode("status")
        let pending: Int = try await service.database.pool.query(
            "SELECT count(*) AS n FROM offers WHERE order_id = \(orderId) AND status = 'pending'"
        ).first!.decode("n")
        #expect(matches == 1 && status == "matched" && pending == 0)
    }
}
