import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import MatchingTestSupport
import Messaging
import Postgres
import ServiceKit
import ServiceLifecycle
import TestSupport
import Testing

@testable import Delivery
@testable import MatchingCore

@Suite struct DeliveryFlowTests {
    @Test func theFirstDelivererDeclinesAndTheSecondAccepts() async throws {
        let app = try await MatchingTestApp.make()
        let (aino, eero, olli) = (Identity.student("Aino"), Identity.student("Eero"), Identity.student("Olli"))
        let (ainoToken, eeroToken, olliToken) = (
            try await app.token(for: aino), try await app.token(for: eero), try await app.token(for: olli)
        )
        let restaurant = MatchingTestApp.unicafe.placeId.uuidString

        try await app.test { client in
            let (ainoRun, _) = try await client.call(
                .post, "/v1/runs", token: ainoToken,
                body: ["restaurantId": restaurant, "destinationId": MatchingTestApp.porthania.placeId.uuidString])
            let (eeroRun, _) = try await client.call(
                .post, "/v1/runs", token: eeroToken,
                body: [
                    "restaurantId": restaurant, "destinationId": MatchingTestApp.metsatalo.placeId.uuidString,
                    "capacity": 2,
                ])
            #expect(ainoRun == .created && eeroRun == .created)

            let (_, restaurants) = try await client.call(.get, "/v1/restaurants", token: olliToken)
            let listed = try #require((restaurants["restaurants"] as? [[String: Any]])?.first)
            #expect(listed["openRuns"] as? Int == 2)
            let (_, runs) = try await client.call(
                .get, "/v1/restaurants/\(restaurant)/runs?lat=60.17018&lon=24.94841", token: olliToken)
            let names = (runs["runs"] as? [[String: Any]])?.compactMap { $0["delivererName"] as? String }
            #expect(names == ["Aino", "Eero"])

            let (placed, order) = try await client.call(
                .post, "/v1/orders", token: olliToken,
                body: [
                    "restaurantId": restaurant, "destinationId": MatchingTestApp.porthania.placeId.uuidString,
                    "items": "Lunch",
                ])
            #expect(placed == .created)
            #expect(order["status"] as? String == "offered")

            let firstOffer = try #require(try await app.pendingOffer(for: aino))
            let (declined, _) = try await client.call(.post, "/v1/offers/\(firstOffer)/decline", token: ainoToken)
            #expect(declined == .ok)
            let secondOffer = try #require(try await app.pendingOffer(for: eero))
            let (accepted, match) = try await client.call(.post, "/v1/offers/\(secondOffer)/accept", token: eeroToken)
            #expect(accepted == .ok)
            #expect(match["delivererName"] as? String == "Eero")
            #expect(match["ordererName"] as? String == "Olli")
            let (again, _) = try await client.call(.post, "/v1/offers/\(firstOffer)/accept", token: ainoToken)
            #expect(again == .conflict)
        }
        let events = try await app.events()

        #expect(
            events.map(\.type) == [
                "run.opened", "run.opened", "order.placed", "order.opened", "offer.made", "offer.declined",
                "offer.made", "match.accepted", "match.opened",
            ])
        #expect(events[4].payload["delivererId"] as? String == aino.userId.uuidString)
        #expect(events[6].payload["delivererId"] as? String == eero.userId.uuidString)
        #expect((events[7].payload["match"] as? [String: Any])?["ordererId"] as? String == olli.userId.uuidString)
    }

    /// The ids of one list of `GET /v1/delivery/current`.
    static func ids(_ answer: [String: Any], _ list: String) -> [String] {
        (answer[list] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    @Test func eachSideFindsWhatTheyHaveUnderWayFromAnyDeviceAndAStrangerNothing() async throws {
        let app = try await MatchingTestApp.make()
        let (aino, olli, sanni) = (Identity.student("Aino"), Identity.student("Olli"), Identity.student("Sanni"))
        let tokens = (
            aino: try await app.token(for: aino), olli: try await app.token(for: olli),
            sanni: try await app.token(for: sanni)
        )

        try await app.test { client in
            let run = try await app.checkIn(aino, capacity: 2)
            let order = try await app.order(olli, "Lunch")
            let (_, delivering) = try await client.call(.get, "/v1/delivery/current", token: tokens.aino)
            let (_, ordering) = try await client.call(.get, "/v1/delivery/current", token: tokens.olli)
            let offer = try #require(try await app.pendingOffer(for: aino))
            let (_, match) = try await client.call(.post, "/v1/offers/\(offer)/accept", token: tokens.aino)
            let matchId = try #require(match["id"] as? String)
            let (_, delivererMatched) = try await client.call(.get, "/v1/delivery/current", token: tokens.aino)
            let (_, ordererMatched) = try await client.call(.get, "/v1/delivery/current", token: tokens.olli)
            let (strangerStatus, stranger) = try await client.call(.get, "/v1/delivery/current", token: tokens.sanni)
            for token in [tokens.aino, tokens.olli] {
                _ = try await client.call(.post, "/v1/matches/\(matchId)/complete", token: token)
            }
            let (_, ordererDone) = try await client.call(.get, "/v1/delivery/current", token: tokens.olli)
            let (_, delivererDone) = try await client.call(.get, "/v1/delivery/current", token: tokens.aino)

            #expect(Self.ids(delivering, "runs") == [run.id.uuidString] && Self.ids(delivering, "orders").isEmpty)
            #expect(Self.ids(ordering, "orders") == [order.id.uuidString] && Self.ids(ordering, "runs").isEmpty)
            #expect(
                Self.ids(delivererMatched, "matches") == [matchId] && Self.ids(ordererMatched, "matches") == [matchId])
            #expect(Self.ids(ordererMatched, "orders") == [order.id.uuidString])
            #expect(strangerStatus == .ok)
            #expect(
                Self.ids(stranger, "runs").isEmpty && Self.ids(stranger, "orders").isEmpty
                    && Self.ids(stranger, "matches").isEmpty)
            #expect(Self.ids(ordererDone, "orders").isEmpty && Self.ids(ordererDone, "matches").isEmpty)
            #expect(
                Self.ids(delivererDone, "matches").isEmpty && Self.ids(delivererDone, "runs") == [run.id.uuidString])
        }
    }

    @Test func anOfferThatTimesOutMovesToTheNextDeliverer() async throws {
        let app = try await MatchingTestApp.make(["DELIVERY_OFFER_WINDOW_SECONDS": "1"])
        let (aino, eero, olli) = (Identity.student("Aino"), Identity.student("Eero"), Identity.student("Olli"))

        try await app.test { _ in
            _ = try await app.checkIn(aino)
            _ = try await app.checkIn(eero, to: MatchingTestApp.metsatalo)
            _ = try await app.order(olli, "Coffee")
            // NB: the offer made to Eero, not one pending: his lasts a second too, and a busy machine may look later.
            try await eventually("the order offered to Eero", timeout: 30) {
                try await app.events().contains {
                    $0.type == "offer.made" && $0.payload["delivererId"] as? String == eero.userId.uuidString
                }
            }
        }
        // Eero's offer may expire in turn before the application stops: only the first three offer events count.
        let offers = Array(try await app.events().filter { $0.type.hasPrefix("offer.") }.prefix(3))

        #expect(offers.map(\.type) == ["offer.made", "offer.expired", "offer.made"])
        #expect(offers.first?.payload["delivererId"] as? String == aino.userId.uuidString)
        #expect(offers.last?.payload["delivererId"] as? String == eero.userId.uuidString)
    }

    @Test func aPlaceAndAUserFromOtherServicesReachTheReadModels() async throws {
        let app = try await MatchingTestApp.make()
        let producer = try await TestDatabase.make(migrations: [PostgresMigrator.messagingDirectory])
        let place = PlaceSnapshot(
            placeId: UUID(), campus: "helsinki.fi", name: "Think Corner", kind: "restaurant", subtype: "cafe",
            latitude: 60.1697, longitude: 24.9486)
        let user = UserSnapshot(userId: UUID(), campus: "helsinki.fi", name: "Helmi", mode: "delivering")
        // Places publishes while matching is down: its queues are there, as a matching that ran once leaves them.
        try Topology(service: "matching", handlers: ReadModels.handlers()).declare(amqpURL: app.broker.url)
        let status = BrokerStatus()
        let relay = OutboxRelay(
            topology: Topology(service: "places", publishes: [PlaceUpserted.type]), postgresURL: producer.url,
            amqpURL: app.broker.url, status: status, logger: TestEnvironment.logger)
        try await producer.pool.transaction { connection in
            try Outbox.append(PlaceUpserted(place: place, version: 1), on: connection)
            try Outbox.append(
                PlaceUpserted(
                    place: PlaceSnapshot(
                        placeId: place.placeId, campus: "helsinki.fi", name: "Old name", kind: "restaurant",
                        subtype: nil,
                        latitude: 0, longitude: 0), version: 0), on: connection)
        }
        try await runBriefly([relay]) {
            try await eventually("places' outbox drained") {
                try await producer.pool.query("SELECT 1 FROM outbox_unsent").isEmpty
            }
        }
        let accounts = OutboxRelay(
            topology: Topology(service: "accounts", publishes: [UserRegistered.type]), postgresURL: producer.url,
            amqpURL: app.broker.url, status: status, logger: TestEnvironment.logger)
        try await producer.pool.transaction { connection in
            try Outbox.append(UserRegistered(user: user, version: 1), on: connection)
        }
        try await runBriefly([accounts]) {
            try await eventually("accounts' outbox drained") {
                try await producer.pool.query("SELECT 1 FROM outbox_unsent").isEmpty
            }
        }

        try await app.test { _ in
            // An older event applied last would leave the place named "Old name", and this would time out.
            try await eventually("the newer place and the user in the read models", timeout: 60) {
                let places = try await app.database.pool.query(
                    "SELECT 1 FROM places WHERE id = \(place.placeId) AND name = 'Think Corner'")
                let users = try await app.database.pool.query("SELECT 1 FROM users WHERE id = \(user.userId)")
                return places.count == 1 && users.count == 1
            }
        }
    }

    @Test func strangersAndOtherCampusesSeeNothingChangeNothingAndAreNamedByNoEvent() async throws {
        let app = try await MatchingTestApp.make()
        let (aino, olli, mallory) = (Identity.student("Aino"), Identity.student("Olli"), Identity.student("Mallory"))
        let outsider = Identity.student("Outsider", campus: "aalto.fi")
        let run = try await app.checkIn(aino)
        let order = try await app.order(olli, "Soup", run: run.id)
        let waiting = try await app.order(mallory, "Pulla", to: MatchingTestApp.farBuilding)
        let offer = try #require(try await app.pendingOffer(for: aino))
        let malloryToken = try await app.token(for: mallory)
        let outsiderToken = try await app.token(for: outsider)

        try await app.test { client in
            let (stolen, _) = try await client.call(.post, "/v1/offers/\(offer)/accept", token: malloryToken)
            let (peek, body) = try await client.call(.get, "/v1/orders/\(order.id)", token: malloryToken)
            let (_, restaurants) = try await client.call(.get, "/v1/restaurants", token: outsiderToken)
            let (outsideRun, _) = try await client.call(
                .post, "/v1/runs", token: outsiderToken,
                body: [
                    "restaurantId": MatchingTestApp.unicafe.placeId.uuidString,
                    "destinationId": MatchingTestApp.porthania.placeId.uuidString,
                ])
            let (badCapacity, problem) = try await client.call(
                .post, "/v1/runs", token: malloryToken,
                body: [
                    "restaurantId": MatchingTestApp.unicafe.placeId.uuidString,
                    "destinationId": MatchingTestApp.porthania.placeId.uuidString, "capacity": 9,
                ])
            // The outsider of Aalto, at Otaniemi, tries everything of Helsinki's.
            var outsiderAnswers: [String: HTTPResponse.Status] = [:]
            for (method, path) in [
                (HTTPRequest.Method.get, "/v1/orders/\(order.id)"), (.post, "/v1/orders/\(order.id)/cancel"),
                (.post, "/v1/orders/\(waiting.id)/take"), (.post, "/v1/offers/\(offer)/accept"),
                (.post, "/v1/offers/\(offer)/decline"), (.delete, "/v1/runs/\(run.id)"),
            ] {
                outsiderAnswers["\(method) \(path)"] = try await client.call(method, path, token: outsiderToken).0
            }
            let (_, open) = try await client.call(
                .get, "/v1/orders/open?lat=60.186&lon=24.828", token: outsiderToken)
            // Another campus's restaurant is as unknown to them as none.
            let (runsStatus, _) = try await client.call(
                .get, "/v1/restaurants/\(MatchingTestApp.unicafe.placeId)/runs", token: outsiderToken)
            let (_, current) = try await client.call(.get, "/v1/delivery/current", token: outsiderToken)
            let match = try await app.steps.accept(offerId: offer, caller: aino)
            for (method, path) in [
                (HTTPRequest.Method.get, "/v1/matches/\(match.id)"), (.post, "/v1/matches/\(match.id)/cancel"),
                (.post, "/v1/matches/\(match.id)/complete"),
            ] {
                outsiderAnswers["\(method) \(path)"] = try await client.call(method, path, token: outsiderToken).0
            }
            let (located, _) = try await client.call(
                .put, "/v1/matches/\(match.id)/location", token: outsiderToken, body: ["lat": 60.17, "lon": 24.95])
            outsiderAnswers["PUT location"] = located

            #expect(stolen == .notFound)
            #expect(peek == .notFound && body["items"] == nil)
            #expect((restaurants["restaurants"] as? [Any])?.isEmpty == true)
            #expect(outsideRun == .notFound)
            #expect(badCapacity == .badRequest && problem["field"] as? String == "capacity")
            #expect(outsiderAnswers.values.allSatisfy { $0 == .notFound }, "\(outsiderAnswers)")
            #expect((open["orders"] as? [Any])?.isEmpty == true && runsStatus == .notFound)
            #expect(
                ["runs", "orders", "matches"].allSatisfy { (current[$0] as? [Any])?.isEmpty == true }, "\(current)")
        }
        let kept = try await app.steps.order(id: waiting.id, caller: mallory)
        let matches: [String] = try await app.database.pool.query("SELECT status FROM matches").map {
            try $0.decode("status")
        }
        #expect(kept.status == .waiting && matches == ["active"])
        for event in try await app.events() {
            let text = String(decoding: try JSONSerialization.data(withJSONObject: event.payload), as: UTF8.self)
            #expect(!text.lowercased().contains(outsider.userId.uuidString.lowercased()), "\(event.type)")
        }
    }

    @Test func bothSidesCompleteTheDelivery() async throws {
        let app = try await MatchingTestApp.make()
        let (aino, olli) = (Identity.student("Aino"), Identity.student("Olli"))
        _ = try await app.checkIn(aino)
        _ = try await app.order(olli, "Soup")
        let match = try await app.steps.accept(
            offerId: try #require(try await app.pendingOffer(for: aino)), caller: aino)

        let half = try await app.steps.completeMatch(id: match.id, caller: olli)
        let whole = try await app.steps.completeMatch(id: match.id, caller: aino)
        let cancelAfter = await #expect(throws: MatchingError.self) {
            try await app.steps.cancelMatch(id: match.id, caller: olli)
        }

        #expect(half.status == .active && half.ordererCompleted && !half.delivererCompleted)
        #expect(whole.status == .completed)
        #expect(cancelAfter != nil)
        let closing = try await app.events().suffix(2)
        #expect(closing.map(\.type) == ["match.completed", "match.closed"])
        #expect(closing.last?.payload["reason"] as? String == "completed")
    }

    @Test func aDelivererWhoCancelsPutsTheOrderBackToDispatch() async throws {
        let app = try await MatchingTestApp.make()
        let (aino, eero, olli) = (Identity.student("Aino"), Identity.student("Eero"), Identity.student("Olli"))
        _ = try await app.checkIn(aino)
        let order = try await app.order(olli, "Soup")
        let match = try await app.steps.accept(
            offerId: try #require(try await app.pendingOffer(for: aino)), caller: aino)

        _ = try await app.steps.cancelMatch(id: match.id, caller: aino)
        let waiting = try await app.steps.order(id: order.id, caller: olli)
        _ = try await app.checkIn(eero, to: MatchingTestApp.metsatalo)
        let reoffered = try await app.steps.order(id: order.id, caller: olli)

        #expect(waiting.status == .waiting)
        #expect(reoffered.status == .offered)
        #expect(try await app.pendingOffer(for: eero) != nil)
        let cancelled = try #require(try await app.events().first { $0.type == "match.cancelled" })
        #expect(cancelled.payload["cancelledBy"] as? String == "deliverer")
    }

    @Test func theDelivererHearsWhenAnOfferIsWithdrawnAndCannotAcceptIt() async throws {
        let app = try await MatchingTestApp.make()
        let (aino, eero, olli, pekka) = (
            Identity.student("Aino"), Identity.student("Eero"), Identity.student("Olli"), Identity.student("Pekka")
        )
        let ainosRun = try await app.checkIn(aino)
        let olliOrder = try await app.order(olli, "Soup")
        let ainosOffer = try #require(try await app.pendingOffer(for: aino))

        // Olli gives up while Aino is deciding.
        _ = try await app.steps.cancelOrder(id: olliOrder.id, caller: olli)
        let lateAccept = await #expect(throws: MatchingError.self) {
            try await app.steps.accept(offerId: ainosOffer, caller: aino)
        }
        _ = try await app.steps.checkOut(runId: ainosRun.id, caller: aino)
        // Eero checks out while deciding on Pekka's order: the order waits for another run.
        let eerosRun = try await app.checkIn(eero, to: MatchingTestApp.metsatalo)
        let pekkasOrder = try await app.order(pekka, "Salad", to: MatchingTestApp.metsatalo, run: eerosRun.id)
        let eerosOffer = try #require(try await app.pendingOffer(for: eero))
        _ = try await app.steps.checkOut(runId: eerosRun.id, caller: eero)

        let withdrawn = try await app.events().filter { $0.type == "offer.withdrawn" }
        let offers = withdrawn.map { $0.payload["offer"] as? [String: Any] ?? [:] }
        #expect(offers.compactMap { $0["offerId"] as? String } == [ainosOffer.uuidString, eerosOffer.uuidString])
        #expect(offers.compactMap { $0["delivererId"] as? String } == [aino.userId.uuidString, eero.userId.uuidString])
        #expect(withdrawn.compactMap { $0.payload["reason"] as? String } == ["orderCancelled", "runClosed"])
        #expect(try await app.steps.order(id: pekkasOrder.id, caller: pekka).status == .waiting)
        #expect(lateAccept?.problem.status == .conflict)
    }

    @Test func aSeatThatAnOfferGivesUpGoesToAnOrderWaitingForIt() async throws {
        let app = try await MatchingTestApp.make()
        let (aino, olli, pekka) = (Identity.student("Aino"), Identity.student("Olli"), Identity.student("Pekka"))
        let run = try await app.checkIn(aino)
        _ = try await app.order(olli, "Soup")
        // Pekka asks for Aino's run while its one seat is offered to Olli's order.
        let pekkasOrder = try await app.order(pekka, "Salad", run: run.id)
        let olliOffer = try #require(try await app.pendingOffer(for: aino))

        _ = try await app.steps.decline(offerId: olliOffer, caller: aino)
        let offered = try await app.steps.order(id: pekkasOrder.id, caller: pekka)
        let nowPending = try await app.database.pool.query(
            "SELECT order_id FROM offers WHERE deliverer_id = \(aino.userId) AND status = 'pending'")

        #expect(pekkasOrder.status == .waiting)
        #expect(offered.status == .offered)
        #expect(try nowPending.map { try $0.decode("order_id", as: UUID.self) } == [pekkasOrder.id])
    }
}

extension MatchingTestApp {
    /// The id of the deliverer's pending offer, if any.
    func pendingOffer(for deliverer: Identity) async throws -> UUID? {
        try await service.database.pool.query(
            "SELECT id FROM offers WHERE deliverer_id = \(deliverer.userId) AND status = 'pending'"
        ).first?.decode("id")
    }
}
