import Foundation
@testable import Delivery
@testable import Matching
@testable import MatchingCore
import Postgres
import Testing
import TestSupport

@Suite struct DeliveryConcurrencyTests {
    @Test func twentyConcurrentAcceptsLeaveOneMatch() async throws {
        let app = try await MatchingTestApp.make()
        let (aino, olli) = (Caller.student("Aino"), Caller.student("Olli"))
        _ = try await app.checkIn(aino, capacity: 4)
        let order = try await app.order(olli, "Soup")
        let offer = try #require(try await app.pendingOffer(for: aino))

        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask { (try? await app.repository.accept(offerId: offer, caller: aino)) != nil }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        let matches = try await app.database.pool.query("SELECT count(*) AS n FROM matches WHERE order_id = \(order.id)")
            .first?.decode("n", as: Int.self)
        let held = try await app.database.pool.query("SELECT held FROM runs").first?.decode("held", as: Int.self)

        #expect(outcomes.filter { $0 }.count == 1)
        #expect(matches == 1)
        #expect(held == 1)
    }

    @Test func aRunOfCapacityTwoNeverHoldsThree() async throws {
        let app = try await MatchingTestApp.make()
        let aino = Caller.student("Aino")
        let run = try await app.checkIn(aino, capacity: 2)

        for _ in 0..<3 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<6 {
                    group.addTask {
                        _ = try await app.order(.student("Orderer \(index)"), "Tea")
                    }
                }
                try await group.waitForAll()
            }
            let pending = try await app.database.pool.query(
                "SELECT id FROM offers WHERE run_id = \(run.id) AND status = 'pending'"
            ).map { try $0.decode("id", as: UUID.self) }
            await withTaskGroup(of: Void.self) { group in
                for offer in pending {
                    group.addTask { _ = try? await app.repository.accept(offerId: offer, caller: aino) }
                }
            }
            let held = try await app.database.pool.query("SELECT held FROM runs WHERE id = \(run.id)").first?
                .decode("held", as: Int.self)
            let active = try await app.database.pool.query(
                "SELECT count(*) AS n FROM matches WHERE run_id = \(run.id) AND status = 'active'"
            ).first?.decode("n", as: Int.self)

            #expect(pending.count <= 2)
            #expect(held == active)
            #expect((held ?? 0) <= 2)
        }
        let held = try await app.database.pool.query("SELECT held FROM runs WHERE id = \(run.id)").first?
            .decode("held", as: Int.self)
        #expect(held == 2)
    }

    @Test func twoSchedulersExpireEachOfferExactlyOnce() async throws {
        let app = try await MatchingTestApp.make(["OFFER_WINDOW_SECONDS": "1"])
        for index in 0..<30 {
            let deliverer = Caller.student("Deliverer \(index)")
            let run = try await app.checkIn(deliverer)
            _ = try await app.order(.student("Orderer \(index)"), "Tea", run: run.id)
        }
        try await Task.sleep(for: .milliseconds(1200))
        // Two processes' schedulers: separate pools on the same database.
        let first = DeliveryPostgresRepository(
            database: try PostgresPool(url: app.database.url, size: 2, logger: TestEnvironment.logger), settings: app.settings)
        let second = DeliveryPostgresRepository(
            database: try PostgresPool(url: app.database.url, size: 2, logger: TestEnvironment.logger), settings: app.settings)

        let worked = try await withThrowingTaskGroup(of: Int.self) { group in
            for scheduler in [first, second] {
                group.addTask {
                    var total = 0
                    while true {
                        let count = try await scheduler.workDueTimers(limit: 3)
                        if count == 0 { return total }
                        total += count
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        let expired = try await app.events().filter { $0.type == "offer.expired" }
        let distinct = Set(expired.compactMap { ($0.payload["offer"] as? [String: Any])?["offerId"] as? String })

        #expect(worked.reduce(0, +) == 30)
        #expect(expired.count == 30)
        #expect(distinct.count == 30)
    }
}
