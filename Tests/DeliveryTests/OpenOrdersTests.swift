import Contracts
import Foundation
import Hummingbird
import MatchingCore
import MatchingTestSupport
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import Delivery

/// Orders that name several restaurants and a point, the open requests deliverers browse, and taking one: against
/// each other and against an offer's accept.
@Suite struct OpenOrdersTests {
    static let kaivopiha = PlaceSnapshot(
        placeId: UUID(), campus: "helsinki.fi", name: "Unicafe Kaivopiha", kind: "restaurant", subtype: "cafe",
        latitude: 60.16945, longitude: 24.94604)
    static let fazer = PlaceSnapshot(
        placeId: UUID(), campus: "helsinki.fi", name: "Fazer Café Kluuvikatu", kind: "restaurant", subtype: "cafe",
        latitude: 60.16846, longitude: 24.94756)
    static let otaniemi = PlaceSnapshot(
        placeId: UUID(), campus: "aalto.fi", name: "Dipoli", kind: "restaurant", subtype: "restaurant",
        latitude: 60.18487, longitude: 24.83261)

    static func make() async throws -> MatchingTestApp {
        let app = try await MatchingTestApp.make()
        try await app.database.pool.transaction { connection in
            for place in [kaivopiha, fazer, otaniemi] {
                try ReadModels.applyPlace(place, version: 1, isRetired: false, on: connection)
            }
        }
        return app
    }

    @Test func anOrderNamingThreeRestaurantsIsOfferedToARunAtTheThird() async throws {
        let app = try await Self.make()
        let (aino, olli) = (Identity.student("Aino"), Identity.student("Olli"))
        let run = try await app.steps.openRun(
            id: nil, caller: aino, restaurantId: Self.fazer.placeId, destinationId: MatchingTestApp.porthania.placeId,
            capacity: 1, minutes: 30)
        let order = try await app.steps.placeOrder(
            id: nil, caller: olli,
            restaurantIds: [MatchingTestApp.unicafe.placeId, Self.kaivopiha.placeId, Self.fazer.placeId],
            destination: .building(MatchingTestApp.porthania.placeId), items: "Pulla", runId: nil)

        #expect(order.status == .offered)
        #expect(order.restaurants.map(\.name) == ["Unicafe Porthania", "Unicafe Kaivopiha", "Fazer Café Kluuvikatu"])
        let offer = try #require(try await app.pendingOffer(for: aino))
        let match = try await app.steps.accept(offerId: offer, caller: aino)
        #expect(match.runId == run.id)
        #expect(match.restaurant.name == "Fazer Café Kluuvikatu")
    }

    @Test func aPointOnTheCampusIsADestinationNamedAfterTheBuildingNearIt() async throws {
        let app = try await Self.make()
        let olli = Identity.student("Olli")
        let order = try await app.steps.placeOrder(
            id: nil, caller: olli, restaurantIds: [MatchingTestApp.unicafe.placeId],
            destination: .point(GeoPoint(lat: 60.17030, lon: 24.94850)), items: "Soup", runId: nil)
        #expect(order.destination.id == nil)
        #expect(order.destination.name == "Near Porthania")
        #expect(order.destination.latitude == 60.17030)

        // A run heading near the point is offered the order: the point is where dispatch measures from.
        let aino = Identity.student("Aino")
        _ = try await app.checkIn(aino)
        #expect(try await app.pendingOffer(for: aino) != nil)
    }

    @Test func twentyDeliverersTakingOneOpenOrderAtOnceLeaveOneMatch() async throws {
        let app = try await Self.make()
        let olli = Identity.student("Olli")
        // Headed 2.5 km away: no run's destination is within the match radius, so the order is never offered.
        let orderId = try await app.order(olli, "Soup", to: MatchingTestApp.farBuilding).id
        let deliverers = (0..<20).map { Identity.student("Deliverer \($0)") }
        for deliverer in deliverers {
            _ = try await app.checkIn(deliverer)
        }

        let outcomes = await withTaskGroup(of: Int.self) { group in
            for deliverer in deliverers {
                group.addTask {
                    do {
                        _ = try await app.steps.take(orderId: orderId, runId: nil, caller: deliverer)
                        return 201
                    } catch let error as MatchingError {
                        return error.problem.status.code
                    } catch {
                        return 500
                    }
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }

        #expect(outcomes.sorted() == [201] + Array(repeating: 409, count: 19))
        try await app.expectOneActiveMatch(of: orderId)
    }

    /// Eero's run, when he has one, is headed far off: only Aino's is offered the order. Checked in nowhere, his take
    /// checks him in, or leaves no run when the accept wins.
    @Test(arguments: [true, false])
    func aTakeRacingAnOffersAcceptLeavesOneMatch(takerCheckedIn: Bool) async throws {
        let app = try await Self.make()
        for round in 0..<8 {
            let (aino, eero, olli) = (
                Identity.student("Aino \(round)"), Identity.student("Eero \(round)"), Identity.student("Olli \(round)")
            )
            if takerCheckedIn { _ = try await app.checkIn(eero, to: MatchingTestApp.farBuilding) }
            let ainoRun = try await app.checkIn(aino)
            let orderId = try await app.order(olli, "Soup").id
            let offer = try #require(try await app.pendingOffer(for: aino))

            async let accepted = try? app.steps.accept(offerId: offer, caller: aino)
            async let taken = try? app.steps.take(orderId: orderId, runId: nil, caller: eero)
            let (acceptance, take) = await (accepted, taken)

            #expect((acceptance == nil) != (take == nil), "round \(round): exactly one wins")
            try await app.expectOneActiveMatch(of: orderId)
            let eeroRuns: [UUID] = try await app.database.pool.query(
                "SELECT id FROM runs WHERE deliverer_id = \(eero.userId)"
            ).map { try $0.decode("id") }
            #expect(eeroRuns.count == (takerCheckedIn || take != nil ? 1 : 0), "round \(round)")
            // The next round's order is offered to its own Aino alone.
            _ = try await app.steps.checkOut(runId: ainoRun.id, caller: aino)
            for run in eeroRuns { _ = try await app.steps.checkOut(runId: run, caller: eero) }
        }
    }

    @Test func theOpenListHidesWhatIsTakenAndTheCallersOwnNearestFirstWithPostGISDistances() async throws {
        let app = try await Self.make()
        let (aino, eero) = (Identity.student("Aino"), Identity.student("Eero Deliverer"))
        let orderers = (0..<4).map { Identity.student("Orderer\($0) Surname") }
        let destinations = [
            MatchingTestApp.farBuilding, MatchingTestApp.metsatalo, MatchingTestApp.porthania,
            MatchingTestApp.metsatalo,
        ]
        var orders: [UUID] = []
        for (orderer, destination) in zip(orderers, destinations) {
            orders.append(try await app.order(orderer, "Soup", to: destination).id)
        }
        let own = try await app.order(aino, "My own", to: MatchingTestApp.porthania).id
        // Eero takes the second order; the list then shows the others, not the taken one, nor Aino's own.
        // NB: Eero's check-in offers him the order headed where he is; a pending offer holds a seat.
        _ = try await app.checkIn(eero, to: MatchingTestApp.farBuilding, capacity: 2)
        _ = try await app.steps.take(orderId: orders[1], runId: nil, caller: eero)

        let here = GeoPoint(lat: 60.17100, lon: 24.94700)
        let page = try await app.steps.openOrders(caller: aino, from: here, restaurantId: nil, limit: 20, after: nil)
        #expect(page.orders.map(\.id) == [orders[2], orders[3], orders[0]])
        #expect(!page.orders.map(\.id).contains(own))
        #expect(page.orders.map(\.ordererFirstName) == ["Orderer2", "Orderer3", "Orderer0"])
        #expect(page.next == nil)

        try await app.database.pool.query("CREATE EXTENSION IF NOT EXISTS postgis")
        for order in page.orders {
            let postgis: Double = try await app.database.pool.query(
                """
                SELECT ST_Distance(ST_MakePoint(\(here.lon), \(here.lat))::geography,
                    ST_MakePoint(\(order.destination.longitude), \(order.destination.latitude))::geography) AS meters
                """
            ).first!.decode("meters")
            let distance = try #require(order.distanceMeters)
            #expect(abs(distance - postgis) <= max(1, postgis * 0.005), "\(distance) m against PostGIS's \(postgis) m")
        }

        // Pages of one resume where the page before ended.
        var paged: [UUID] = []
        var after: String?
        repeat {
            let page = try await app.steps.openOrders(
                caller: aino, from: here, restaurantId: nil, limit: 1, after: after)
            paged += page.orders.map(\.id)
            after = page.next
        } while after != nil
        #expect(paged == [orders[2], orders[3], orders[0]])

        let elsewhere = try await app.steps.openOrders(
            caller: aino, from: here, restaurantId: Self.fazer.placeId, limit: 20, after: nil)
        #expect(elsewhere.orders.isEmpty)
    }

    @Test func badOrdersAndTakesAreProblemsNamingTheFieldAndChangeNothing() async throws {
        let app = try await Self.make()
        let (aino, olli) = (Identity.student("Aino"), Identity.student("Olli"))
        let olliToken = try await app.token(for: olli)
        let ainoToken = try await app.token(for: aino)
        let unicafe = MatchingTestApp.unicafe.placeId.uuidString
        let porthania = MatchingTestApp.porthania.placeId.uuidString

        try await app.test { client in
            let refused: [([String: Any], Int, String)] = [
                (
                    ["restaurantIds": (0..<6).map { _ in UUID().uuidString }, "destinationId": porthania], 400,
                    "restaurantIds"
                ),
                (["restaurantIds": [unicafe, unicafe], "destinationId": porthania], 400, "restaurantIds"),
                (
                    ["restaurantIds": [unicafe], "restaurantId": unicafe, "destinationId": porthania], 400,
                    "restaurantIds"
                ),
                (
                    ["restaurantIds": [unicafe, Self.otaniemi.placeId.uuidString], "destinationId": porthania], 404,
                    "restaurantIds[1]"
                ),
                (["restaurantId": unicafe, "destination": ["lat": 60.20, "lon": 24.94]], 400, "destination"),
                (["restaurantId": unicafe, "destination": ["lat": 91, "lon": 24.94]], 400, "destination.lat"),
                (
                    [
                        "restaurantId": unicafe, "destination": ["lat": 60.17, "lon": 24.94],
                        "destinationId": porthania,
                    ],
                    400, "destination"
                ),
            ]
            for (body, status, field) in refused {
                let (answer, problem) = try await client.call(
                    .post, "/v1/orders", token: olliToken, body: body.merging(["items": "Soup"]) { $1 })
                #expect(answer.code == status, "\(body)")
                #expect(
                    (problem["detail"] as? String ?? "").contains(field) || problem["field"] as? String == field,
                    "\(body): \(problem)")
            }
            let (_, orders) = try await client.call(.get, "/v1/orders/open", token: ainoToken)
            #expect((orders["orders"] as? [Any])?.isEmpty == true)

            for (query, field) in [
                ("lat=95&lon=24.9", "lat"), ("lat=60.1", "lon"), ("limit=0", "limit"),
                ("after=nonsense", "after"), ("restaurantId=x", "restaurantId"),
            ] {
                let (answer, problem) = try await client.call(.get, "/v1/orders/open?\(query)", token: ainoToken)
                #expect(answer == .badRequest && problem["field"] as? String == field, "\(query): \(problem)")
            }

            // Olli's order: not his to take; nobody's without a run at its restaurant; once taken, taken.
            let (_, order) = try await client.call(
                .post, "/v1/orders", token: olliToken,
                body: [
                    "restaurantId": unicafe, "destinationId": MatchingTestApp.farBuilding.placeId.uuidString,
                    "items": "Soup",
                ])
            let orderId = try #require(order["id"] as? String)
            for (body, status, field) in [
                (["restaurantId": Self.fazer.placeId.uuidString], 400, "restaurantId"),
                (["restaurantId": "x"], 400, nil),
                (["position": ["lat": 60.20, "lon": 24.94]], 400, "position"),
                (["position": ["lat": 95, "lon": 24.94]], 400, "position.lat"),
                (["runId": UUID().uuidString], 404, nil),
            ] as [([String: Any], Int, String?)] {
                let (answer, problem) = try await client.call(
                    .post, "/v1/orders/\(orderId)/take", token: ainoToken, body: body)
                #expect(answer.code == status, "\(body): \(problem)")
                if let field { #expect(problem["field"] as? String == field, "\(body): \(problem)") }
            }
            _ = try await app.checkIn(olli, to: MatchingTestApp.farBuilding)
            let (ownOrder, _) = try await client.call(.post, "/v1/orders/\(orderId)/take", token: olliToken)
            #expect(ownOrder == .conflict)
            _ = try await app.checkIn(aino, to: MatchingTestApp.farBuilding)
            let (taken, match) = try await client.call(.post, "/v1/orders/\(orderId)/take", token: ainoToken)
            #expect(taken == .created && match["ordererName"] as? String == "Olli")
            let eero = Identity.student("Eero")
            _ = try await app.checkIn(eero, to: MatchingTestApp.farBuilding)
            let (again, _) = try await client.call(
                .post, "/v1/orders/\(orderId)/take", token: try await app.token(for: eero))
            #expect(again == .conflict)
            let (outsider, _) = try await client.call(
                .post, "/v1/orders/\(orderId)/take",
                token: try await app.token(for: .student("Oona", campus: "aalto.fi")))
            #expect(outsider == .notFound)
        }
        let stored: Int = try await app.database.pool.query("SELECT count(*) AS n FROM orders").first!.decode("n")
        #expect(stored == 1)
        // Refused takes checked nobody in: the runs are the three checked in by hand.
        let runs: Int = try await app.database.pool.query("SELECT count(*) AS n FROM runs").first!.decode("n")
        #expect(runs == 3)
    }

    /// A point a student gives off their campus, where the delivery flow takes one.
    enum OffCampusPoint: String, CaseIterable, Sendable {
        /// Olli of Helsinki orders to a point at Otaniemi.
        case orderDestination
        /// Oona of Aalto lists the open orders from a point of Helsinki's campus.
        case openOrdersPosition
        /// Olli of Helsinki lists the runs at Unicafe from Otaniemi.
        case runsPosition
    }

    @Test(arguments: OffCampusPoint.allCases)
    func aPointOffTheCallersCampusIsAProblemNamingTheFieldAndTheCampusAndNothingIsStored(_ point: OffCampusPoint)
        async throws
    {
        let app = try await Self.make()
        let (olli, oona) = (Identity.student("Olli"), Identity.student("Oona", campus: "aalto.fi"))
        let (olliToken, oonaToken) = (try await app.token(for: olli), try await app.token(for: oona))
        let unicafe = MatchingTestApp.unicafe.placeId.uuidString
        let (aalto, helsinki) = ("Aalto University, Otaniemi", "University of Helsinki, City Centre Campus")

        try await app.test { client in
            let ((status, problem), field, campus): ((HTTPResponse.Status, [String: Any]), String, String)
            switch point {
            case .orderDestination:
                (status, problem) = try await client.call(
                    .post, "/v1/orders", token: olliToken,
                    body: ["restaurantId": unicafe, "destination": ["lat": 60.186, "lon": 24.828], "items": "Soup"])
                (field, campus) = ("destination", helsinki)
            case .openOrdersPosition:
                (status, problem) = try await client.call(
                    .get, "/v1/orders/open?lat=60.17&lon=24.95", token: oonaToken)
                (field, campus) = ("lat", aalto)
            case .runsPosition:
                (status, problem) = try await client.call(
                    .get, "/v1/restaurants/\(unicafe)/runs?lat=60.186&lon=24.828", token: olliToken)
                (field, campus) = ("lat", helsinki)
            }

            #expect(status == .badRequest && problem["field"] as? String == field, "\(problem)")
            #expect((problem["detail"] as? String)?.contains(campus) == true, "\(problem)")
        }
        let stored: Int = try await app.database.pool.query(
            "SELECT (SELECT count(*) FROM orders) + (SELECT count(*) FROM runs) AS n"
        ).first!.decode("n")
        #expect(stored == 0)
    }

    @Test func anExpiredOrderCannotBeTaken() async throws {
        let app = try await MatchingTestApp.make(["DELIVERY_ORDER_LIFETIME_SECONDS": "1"])
        let (aino, olli) = (Identity.student("Aino"), Identity.student("Olli"))
        let order = try await app.order(olli, "Soup", to: MatchingTestApp.farBuilding)
        _ = try await app.checkIn(aino, to: MatchingTestApp.porthania)
        // Its timer need not have run: the order's lifetime decides.
        try await eventually("the order's lifetime passed") { Date() > order.expiresAt.addingTimeInterval(0.1) }
        await #expect(throws: MatchingError.conflict("The order has expired.")) {
            try await app.steps.take(orderId: order.id, runId: nil, caller: aino)
        }
    }
}
