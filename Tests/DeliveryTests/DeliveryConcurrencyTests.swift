import Foundation
import MatchingTestSupport
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import Delivery
@testable import MatchingCore

@Suite struct DeliveryConcurrencyTests {
    /// An order is offered to one run at a time (`offers_one_pending_per_order`), so twenty deliverers can never hold
    /// offers of one order together and accept it at once. Where twenty deliverers do meet is a waiting order: each
    /// check-in at its restaurant dispatches the orders waiting there. So twenty check in at once, and each accepts
    /// the order the moment it is offered to them: exactly one may get it, and only once.
    @Test func twentyDeliverersCheckingInAtOnceForOneWaitingOrderLeaveOneMatch() async throws {
        let app = try await MatchingTestApp.make()
        let orderId = try await app.order(.student("Olli"), "Soup").id
        let deliverers = (0..<20).map { Identity.student("Deliverer \($0)") }

        let accepted = try await withThrowingTaskGroup(of: Bool.self) { group in
            for deliverer in deliverers {
                group.addTask {
                    _ = try await app.checkIn(deliverer)
                    // Another deliverer's check-in may be the one that offers the order to this one.
                    try await eventually("the order offered") { try await !app.deliverersOffered(orderId).isEmpty }
                    guard let offer = try await app.pendingOffer(for: deliverer) else { return false }
                    return (try? await app.steps.accept(offerId: offer, caller: deliverer)) != nil
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        let offered = try await app.deliverersOffered(orderId)
        let matched = try await app.database.pool.query(
            "SELECT deliverer_id FROM matches WHERE order_id = \(orderId) AND status = 'active'"
        ).map { try $0.decode("deliverer_id", as: UUID.self) }
        let held = try await app.database.pool.query("SELECT sum(held) AS n FROM runs").first?.decode("n", as: Int.self)
        let status = try await app.database.pool.query("SELECT status FROM orders WHERE id = \(orderId)").first?
            .decode("status", as: String.self)

        #expect(accepted.count(where: \.self) == 1)
        #expect(offered.count == 1)
        #expect(matched.count == 1 && matched == offered)
        #expect(held == 1)
        #expect(status == "matched")
    }

    /// A deliverer who taps accept twenty times at once (or a client that retries) still takes the order once.
    @Test func oneOfferAcceptedTwentyTimesAtOnceMakesOneMatch() async throws {
        let app = try await MatchingTestApp.make()
        let (aino, olli) = (Identity.student("Aino"), Identity.student("Olli"))
        _ = try await app.checkIn(aino, capacity: 4)
        let order = try await app.order(olli, "Soup")
        let offer = try #require(try await app.pendingOffer(for: aino))

        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<20 {
                group.addTask { (try? await app.steps.accept(offerId: offer, caller: aino)) != nil }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        let matches = try await app.database.pool.query(
            "SELECT count(*) AS n FROM matches WHERE order_id = \(order.id)"
        )
        .first?.decode("n", as: Int.self)
        let held = try await app.database.pool.query("SELECT held FROM runs").first?.decode("held", as: Int.self)

        #expect(outcomes.filter { $0 }.count == 1)
        #expect(matches == 1)
        #expect(held == 1)
    }

    @Test func aRunOfCapacityTwoNeverHoldsThree() async throws {
        let app = try await MatchingTestApp.make()
        let aino = Identity.student("Aino")
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
                    group.addTask { _ = try? await app.steps.accept(offerId: offer, caller: aino) }
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
        let app = try await MatchingTestApp.make(["DELIVERY_OFFER_WINDOW_SECONDS": "1"])
        for index in 0..<30 {
            let deliverer = Identity.student("Deliverer \(index)")
            let run = try await app.checkIn(deliverer)
            _ = try await app.order(.student("Orderer \(index)"), "Tea", run: run.id)
        }
        try await eventually("the 30 offers' windows over") {
            let due: Int = try await app.database.pool.query(
                "SELECT count(*) AS n FROM timers WHERE kind = 'offer' AND done_at IS NULL AND due_at <= now()"
            ).first!.decode("n")
            return due == 30
        }
        // Two processes' schedulers: separate pools on the same database.
        let handlers = DeliveryFlow.timerHandlers(settings: try app.settings)
        let schedulers = try (0..<2).map { _ in
            TimerScheduler(
                database: try PostgresPool(url: app.database.url, size: 2, logger: TestEnvironment.logger),
                handlers: handlers, interval: .seconds(1),
                logger: TestEnvironment.logger)
        }

        let worked = try await withThrowingTaskGroup(of: Int.self) { group in
            for scheduler in schedulers {
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

extension MatchingTestApp {
    /// The deliverers the order has been offered to, whatever became of the offers.
    func deliverersOffered(_ orderId: UUID) async throws -> [UUID] {
        try await service.database.pool.query("SELECT deliverer_id FROM offers WHERE order_id = \(orderId)")
            .map { try $0.decode("deliverer_id") }
    }
}
