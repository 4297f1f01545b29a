import Contracts
import Foundation
import HummingbirdTesting
import MatchingTestSupport
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import MatchingCore
@testable import Rides

/// The ride code's rules, without a database.
@Suite struct RideCodeRulesTests {
    @Test func aCodeIsFourDigitsFromTheWholeRange() {
        var system = SystemRandomNumberGenerator()

        let drawn = (0..<2000).map { _ in RideCode.draw(using: &system) }
        let numbers = drawn.compactMap { Int($0) }

        #expect(RideCode.digits(0) == "0000" && RideCode.digits(7) == "0007" && RideCode.digits(9999) == "9999")
        #expect(drawn.allSatisfy { $0.utf8.count == 4 && $0.allSatisfy(\.isASCII) } && numbers.count == 2000)
        // NB: that 2,000 draws of 10,000 codes miss a whole tenth of the range has a chance of 0.9^2000.
        #expect(numbers.contains { $0 < 1000 } && numbers.contains { $0 >= 9000 })
        #expect(RideCode.draw().utf8.count == 4)
    }

    @Test func onlyFourAsciiDigitsAreACode() throws {
        #expect(try RideCode.validated("0427") == "0427")
        for bad in ["12", "12345", "abcd", "", " 123", "123 ", "١٢٣٤", "12.3", "+123"] {
            #expect(problemField { _ = try RideCode.validated(bad) } == "code", "\(bad)")
        }
        #expect(problemField { _ = try RideCode.validated(nil) } == "code")
    }

    @Test func theFifthWrongCodeIsRefusedAndTheRightOneAlwaysStarts() {
        #expect(RideCode.check("4821", against: "4821", wrongSoFar: 4) == .right)
        #expect(RideCode.check("4821", against: "4821", wrongSoFar: 0) == .right)
        #expect(
            (0..<4).map { RideCode.check("0000", against: "4821", wrongSoFar: $0) }
                == [4, 3, 2, 1].map {
                    .wrong(triesLeft: $0)
                })
        #expect(RideCode.check("0000", against: "4821", wrongSoFar: 4) == .refused)
        #expect(RideCode.check("0000", against: nil, wrongSoFar: 0) == .wrong(triesLeft: 4))
    }

    @Test func aRefusalSaysHowManyTriesAreLeftOrThatTheRideIsCancelled() {
        #expect(RideCode.refusal(.right) == nil)
        #expect(
            RideCode.refusal(.wrong(triesLeft: 4))
                == .conflict("The code is not the rider's; 4 tries left before the ride is cancelled."))
        #expect(
            RideCode.refusal(.wrong(triesLeft: 1))
                == .conflict("The code is not the rider's; 1 try left before the ride is cancelled."))
        #expect(
            RideCode.refusal(.refused)
                == .conflict("The code is not the rider's, 5 times: the ride is cancelled and the rider is told."))
    }

    func problemField(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return (error as? MatchingError)?.problem.field
        }
    }
}

/// The ride code on real PostgreSQL and RabbitMQ: the rider sees it, the driver never, and the driver starts the ride
/// with it.
extension RidesTests {
    /// The code of a ride as its rider reads it.
    func riderCode(_ client: any TestClientProtocol, _ rideId: UUID, riderToken: String) async throws -> String {
        let (status, ride) = try await client.call(.get, "/v1/rides/\(rideId)", token: riderToken)
        guard status == .ok, let code = ride["code"] as? String else {
            throw TestFailure("the rider's ride answered \(status) without a code: \(ride)")
        }
        return code
    }

    /// Marks the ride arrived, started with its rider's code, and completed.
    func driveToTheEnd(_ client: any TestClientProtocol, _ rideId: UUID, riderToken: String, driverToken: String)
        async throws
    {
        let code = try await riderCode(client, rideId, riderToken: riderToken)
        for (step, body) in [("arrived", nil), ("started", ["code": code]), ("completed", nil)]
            as [(String, [String: Any]?)]
        {
            let (status, answer) = try await client.call(
                .post, "/v1/rides/\(rideId)/\(step)", token: driverToken, body: body)
            guard status == .ok else { throw TestFailure("marking \(step) answered \(status): \(answer)") }
        }
    }

    /// A rider's ride accepted by a driver online nearby and marked arrived, with both tokens.
    func arrivedRide(_ app: MatchingTestApp, _ client: any TestClientProtocol, rider: Identity, driver: Identity)
        async throws -> (rideId: UUID, riderToken: String, driverToken: String)
    {
        let tokens = try await tokens(app, [rider, driver])
        try await addDriver(client, tokens[1], at: Self.north(meters: 300))
        let rideId = try await requestRide(client, tokens[0])
        for step in ["accept", "arrived"] {
            let (status, answer) = try await client.call(.post, "/v1/rides/\(rideId)/\(step)", token: tokens[1])
            guard status == .ok else { throw TestFailure("\(step) answered \(status): \(answer)") }
        }
        return (rideId, tokens[0], tokens[1])
    }

    /// What the database holds of a ride's code: its status, the code, the wrong codes counted and the version.
    func codeRow(_ app: MatchingTestApp, _ rideId: UUID) async throws
        -> (status: String, code: String?, wrongCodes: Int, version: Int64)
    {
        try await app.database.pool.query(
            "SELECT status, code, wrong_codes, version FROM rides WHERE id = \(rideId)"
        ).first.map {
            (try $0.decode("status"), try $0.decode("code"), try $0.decode("wrong_codes"), try $0.decode("version"))
        }!
    }

    /// Another code than `code`, `by` further on.
    static func other(than code: String, by step: Int = 1) -> String {
        RideCode.digits((Int(code)! + step) % 10_000)
    }

    /// Whether any JSON value inside `json` is an object with a `code` key, or a string equal to `code`.
    func carries(_ json: Any?, code: String) -> Bool {
        switch json {
        case let object as [String: Any]: object["code"] != nil || object.values.contains { carries($0, code: code) }
        case let array as [Any]: array.contains { carries($0, code: code) }
        case let string as String: string == code
        default: false
        }
    }

    /// The users an event reaches: its recipients, or a match's members.
    func reached(_ payload: [String: Any]) -> Set<UUID> {
        let members = (payload["members"] as? [[String: Any]] ?? []).compactMap { $0["userId"] as? String }
        let memberIds = payload["memberIds"] as? [String] ?? []
        return Set(recipients(payload) + (members + memberIds).compactMap(UUID.init(uuidString:)))
    }

    @Test func theRiderSeesTheCodeAndTheDriverNeverDoes() async throws {
        let app = try await MatchingTestApp.make()
        let (rider, driver) = (Identity.student("Riikka"), Identity.student("Kalle"))
        let tokens = try await tokens(app, [rider, driver])

        try await app.test { client in
            try await addDriver(client, tokens[1], at: Self.north(meters: 300))
            let rideId = try await requestRide(client, tokens[0])
            let (_, open) = try await client.call(.get, "/v1/rides/\(rideId)", token: tokens[0])
            let (_, accepted) = try await client.call(.post, "/v1/rides/\(rideId)/accept", token: tokens[1])
            let (_, retried) = try await client.call(.post, "/v1/rides/\(rideId)/accept", token: tokens[1])
            let (_, ridersView) = try await client.call(.get, "/v1/rides/\(rideId)", token: tokens[0])
            let (_, ridersCurrent) = try await client.call(.get, "/v1/rides/current", token: tokens[0])
            let (_, driversView) = try await client.call(.get, "/v1/rides/\(rideId)", token: tokens[1])
            let (_, driversCurrent) = try await client.call(.get, "/v1/rides/current", token: tokens[1])
            let (_, arrived) = try await client.call(.post, "/v1/rides/\(rideId)/arrived", token: tokens[1])
            let (_, ridersArrived) = try await client.call(.get, "/v1/rides/\(rideId)", token: tokens[0])
            let code = try #require(ridersView["code"] as? String)
            let stored = try await codeRow(app, rideId)

            #expect(open["code"] == nil && accepted["status"] as? String == "accepted")
            #expect(code.count == 4 && code.allSatisfy(\.isASCII) && Int(code) != nil)
            #expect(stored.code == code && stored.wrongCodes == 0)
            #expect(ridersCurrent["code"] as? String == code && ridersArrived["code"] as? String == code)
            for view in [accepted, retried, driversView, driversCurrent, arrived] {
                #expect(view["code"] == nil && !carries(view, code: code), "\(view)")
                #expect(view["id"] as? String == rideId.uuidString)
            }
        }
        let events = try await app.events()
        let code: String = try await app.database.pool.query("SELECT code FROM rides").first!.decode("code")

        let acceptedEvents = events.filter { $0.type == RideAccepted.type }
        #expect(acceptedEvents.count == 1 && acceptedEvents.first?.payload["code"] as? String == code)
        #expect(acceptedEvents.first.map { recipients($0.payload) } == [rider.userId])
        let toTheDriver = events.filter { reached($0.payload).contains(driver.userId) }
        #expect(Set(toTheDriver.map(\.type)) == [RideOffered.type, MatchOpened.type])
        #expect(!toTheDriver.contains { carries($0.payload, code: code) })
    }

    @Test func aWrongCodeIsAConflictThatChangesNothingButTheCountAndTheRightOneStarts() async throws {
        let app = try await MatchingTestApp.make()
        let (rider, driver) = (Identity.student("Riikka"), Identity.student("Kalle"))

        try await app.test { client in
            let ride = try await arrivedRide(app, client, rider: rider, driver: driver)
            let code = try await riderCode(client, ride.rideId, riderToken: ride.riderToken)
            let wrong = Self.other(than: code)
            let before = try await codeRow(app, ride.rideId)
            let eventsBefore = try await app.events().count
            let (first, problem) = try await client.call(
                .post, "/v1/rides/\(ride.rideId)/started", token: ride.driverToken, body: ["code": wrong])
            let afterOne = try await codeRow(app, ride.rideId)
            let eventsAfterOne = try await app.events().count
            let (byRider, _) = try await client.call(
                .post, "/v1/rides/\(ride.rideId)/started", token: ride.riderToken, body: ["code": code])
            var details: [String] = []
            for _ in 0..<3 {
                let (status, answer) = try await client.call(
                    .post, "/v1/rides/\(ride.rideId)/started", token: ride.driverToken, body: ["code": wrong])
                #expect(status == .conflict)
                details.append(answer["detail"] as? String ?? "")
            }
            let afterFour = try await codeRow(app, ride.rideId)
            let (started, startedRide) = try await client.call(
                .post, "/v1/rides/\(ride.rideId)/started", token: ride.driverToken, body: ["code": code])
            let afterStart = try await codeRow(app, ride.rideId)

            #expect(first == .conflict && problem["status"] as? Int == 409)
            #expect(
                problem["detail"] as? String
                    == "The code is not the rider's; 4 tries left before the ride is cancelled.")
            #expect(afterOne.status == "arrived" && afterOne.code == before.code && afterOne.version == before.version)
            #expect(before.wrongCodes == 0 && afterOne.wrongCodes == 1 && eventsAfterOne == eventsBefore)
            #expect(byRider == .conflict)
            #expect(details.map { $0.contains("tries left") || $0.contains("try left") } == [true, true, true])
            #expect(details.last?.contains("1 try left") == true)
            #expect(afterFour.status == "arrived" && afterFour.wrongCodes == 4)
            #expect(started == .ok && startedRide["status"] as? String == "started" && startedRide["code"] == nil)
            #expect(afterStart.status == "started" && afterStart.wrongCodes == 4)
        }
        let steps = try await app.events().filter { $0.type.hasPrefix("ride.") && $0.type != RideOffered.type }

        #expect(steps.map(\.type) == [RideAccepted.type, RideArrived.type, RideStarted.type])
    }

    @Test func fiveWrongCodesCancelTheRideAndBothAreTold() async throws {
        let app = try await MatchingTestApp.make()
        let (rider, driver) = (Identity.student("Riikka"), Identity.student("Kalle"))

        try await app.test { client in
            let ride = try await arrivedRide(app, client, rider: rider, driver: driver)
            let code = try await riderCode(client, ride.rideId, riderToken: ride.riderToken)
            let wrong = Self.other(than: code, by: 5_000)
            var answers: [(isConflict: Bool, detail: String)] = []
            for _ in 0..<5 {
                let (status, problem) = try await client.call(
                    .post, "/v1/rides/\(ride.rideId)/started", token: ride.driverToken, body: ["code": wrong])
                answers.append((status == .conflict, problem["detail"] as? String ?? ""))
            }
            let (later, laterProblem) = try await client.call(
                .post, "/v1/rides/\(ride.rideId)/started", token: ride.driverToken, body: ["code": code])
            let (_, ridersView) = try await client.call(.get, "/v1/rides/\(ride.rideId)", token: ride.riderToken)
            let (_, driversView) = try await client.call(.get, "/v1/rides/\(ride.rideId)", token: ride.driverToken)
            let (riderCancels, _) = try await client.call(
                .post, "/v1/rides/\(ride.rideId)/cancel", token: ride.riderToken)
            let (askedAgain, _) = try await client.call(
                .post, "/v1/rides", token: ride.riderToken, body: ["pickup": Self.placeOf(MatchingTestApp.porthania)])
            let stored = try await codeRow(app, ride.rideId)

            #expect(answers.allSatisfy { $0.isConflict })
            #expect(
                answers.last?.detail
                    == "The code is not the rider's, 5 times: the ride is cancelled and the rider is told.")
            #expect(later == .conflict && (laterProblem["detail"] as? String)?.contains("5 wrong codes") == true)
            for view in [ridersView, driversView] {
                #expect(view["status"] as? String == "cancelled" && view["cancelReason"] as? String == "codeRefused")
            }
            #expect(driversView["code"] == nil && riderCancels == .conflict && askedAgain == .created)
            #expect(stored.status == "cancelled" && stored.wrongCodes == 5)
        }
        let events = try await app.events()

        let cancelled = events.filter { $0.type == RideCancelled.type }
        #expect(cancelled.count == 1)
        #expect(cancelled.first.map { Set(recipients($0.payload)) } == [rider.userId, driver.userId])
        #expect(cancelled.first?.payload["reason"] as? String == "codeRefused")
        #expect(cancelled.first?.payload["cancelledBy"] as? String == driver.userId.uuidString)
        #expect(cancelled.first?.payload["code"] == nil)
        let closed = events.filter { $0.type == MatchClosed.type }
        #expect(closed.count == 1 && closed.first?.payload["reason"] as? String == "cancelled")
        #expect(closed.first.map { reached($0.payload) } == [rider.userId, driver.userId])
        #expect(!events.contains { $0.type == RideStarted.type })
    }

    @Test func eightWrongCodesAtOnceCountFiveAndCancelTheRideOnce() async throws {
        let app = try await MatchingTestApp.make()
        let steps = try app.steps
        let (rider, driver) = (Identity.student("Riikka"), Identity.student("Kalle"))
        _ = try await steps.saveDriver(car: "Red Skoda", seats: 3, caller: driver)
        let ride = try await steps.requestRide(
            id: nil, RideDraft(pickup: .place(MatchingTestApp.porthania.placeId), dropoff: nil, note: nil),
            caller: rider)
        _ = try await steps.accept(ride.id, caller: driver)
        _ = try await steps.mark(ride.id, .arrived, caller: driver)
        let code = try #require(try await steps.ride(ride.id, caller: rider)?.code)
        let wrong = Self.other(than: code)

        let details = await withTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    do {
                        _ = try await steps.mark(ride.id, .started, code: wrong, caller: driver)
                        return "started"
                    } catch let error as MatchingError {
                        guard case .conflict(let detail) = error else { return "\(error)" }
                        return detail
                    } catch {
                        return "\(error)"
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let stored = try await codeRow(app, ride.id)
        let events = try await app.events()

        #expect(details.filter { $0.contains("left before the ride is cancelled") }.count == 4, "\(details)")
        #expect(details.filter { $0.contains("the ride is cancelled and the rider is told") }.count == 1)
        #expect(details.filter { $0.contains("cancelled after 5 wrong codes") }.count == 3)
        #expect(stored.status == "cancelled" && stored.wrongCodes == 5)
        #expect(events.filter { $0.type == RideCancelled.type }.count == 1)
        #expect(events.filter { $0.type == MatchClosed.type }.count == 1)
        #expect(!events.contains { $0.type == RideStarted.type })
    }

    @Test func aCodeThatIsNotFourDigitsIsAProblemNamingCodeAndIsNotCounted() async throws {
        let app = try await MatchingTestApp.make()
        let (rider, driver) = (Identity.student("Riikka"), Identity.student("Kalle"))

        try await app.test { client in
            let ride = try await arrivedRide(app, client, rider: rider, driver: driver)
            let bodies: [[String: Any]?] = [
                ["code": "12"], ["code": "abcd"], ["code": "12345"], ["code": " 123"], ["code": 1234], [:], nil,
                ["kode": "1234"],
            ]
            for body in bodies {
                let (status, problem) = try await client.call(
                    .post, "/v1/rides/\(ride.rideId)/started", token: ride.driverToken, body: body)
                #expect(status == .badRequest && problem["field"] as? String == "code", "\(String(describing: body))")
            }
            let stored = try await codeRow(app, ride.rideId)

            #expect(stored.status == "arrived" && stored.wrongCodes == 0)
        }
    }

    @Test func aDriverWhoGivesUpTakesTheCodeAwayAndTheNextDriverGetsANewOne() async throws {
        let app = try await MatchingTestApp.make()
        let (rider, first, second) = (Identity.student("Riikka"), Identity.student("Kalle"), Identity.student("Eino"))

        try await app.test { client in
            let ride = try await arrivedRide(app, client, rider: rider, driver: first)
            let secondToken = try await app.token(for: second)
            try await addDriver(client, secondToken, at: Self.north(meters: 400))
            let firstCode = try await riderCode(client, ride.rideId, riderToken: ride.riderToken)
            let (wrong, _) = try await client.call(
                .post, "/v1/rides/\(ride.rideId)/started", token: ride.driverToken,
                body: ["code": Self.other(than: firstCode)])
            let (givenUp, _) = try await client.call(.post, "/v1/rides/\(ride.rideId)/cancel", token: ride.driverToken)
            let reopened = try await codeRow(app, ride.rideId)
            let (_, openView) = try await client.call(.get, "/v1/rides/\(ride.rideId)", token: ride.riderToken)
            let (accepted, _) = try await client.call(.post, "/v1/rides/\(ride.rideId)/accept", token: secondToken)
            let again = try await codeRow(app, ride.rideId)
            let code = try await riderCode(client, ride.rideId, riderToken: ride.riderToken)

            #expect(wrong == .conflict && givenUp == .ok && accepted == .ok)
            #expect(reopened.status == "open" && reopened.code == nil && reopened.wrongCodes == 0)
            #expect(openView["code"] == nil)
            #expect(again.status == "accepted" && again.code == code && again.wrongCodes == 0)
        }
        let accepted = try await app.events().filter { $0.type == RideAccepted.type }

        #expect(accepted.count == 2 && accepted.allSatisfy { recipients($0.payload) == [rider.userId] })
    }
}
