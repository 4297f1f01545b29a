import Contracts
import Foundation
import Testing

@testable import MatchingCore
@testable import Rides

/// The rides flow's states and rules, every state against every action, without a database.
@Suite struct RideStatesTests {
    static let rider = UUID()
    static let driver = UUID()

    /// The detail of the 409 `body` throws, or nil when it throws none.
    func conflict(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return detail(error)
        }
    }

    /// The detail of a 409.
    func detail(_ error: any Error) -> String {
        guard case MatchingError.conflict(let detail)? = error as? MatchingError else { return "not a 409: \(error)" }
        return detail
    }

    @Test func rideTransitions() {
        let allowed: [(RideStatus, RideStatus.Action, RideStatus)] = [
            (.open, .accept, .accepted), (.accepted, .mark(.arrived), .arrived), (.arrived, .mark(.started), .started),
            (.started, .mark(.completed), .completed), (.open, .cancel, .cancelled), (.accepted, .cancel, .cancelled),
            (.arrived, .cancel, .cancelled), (.accepted, .giveUp, .open), (.arrived, .giveUp, .open),
            (.open, .expire, .expired), (.arrived, .refuseCode, .cancelled),
        ]

        for status in RideStatus.allCases {
            for action in RideStatus.Action.allCases {
                let expected = allowed.first { $0.0 == status && $0.1 == action }?.2
                let next = try? status.after(action)
                let refusal = conflict { _ = try status.after(action) }

                #expect(next == expected, "\(status) after \(action)")
                #expect((refusal == nil) == (expected != nil), "\(status) after \(action): \(refusal ?? "allowed")")
                #expect(refusal?.hasPrefix("not a 409") != true)
            }
        }
        #expect(RideStatus.Action.allCases.count == 8)
    }

    @Test func underwayAndCancellableFollowTheTransitions() {
        for status in RideStatus.allCases {
            #expect(status.isCancellable == ((try? status.after(.cancel)) != nil))
        }
        #expect(RideStatus.allCases.filter(\.isUnderway) == [.accepted, .arrived, .started])
        #expect(RideStatus.allCases.filter(\.isCancellable) == [.open, .accepted, .arrived])
    }

    @Test func aRefusedActionSaysWhy() {
        #expect(conflict { _ = try RideStatus.started.after(.accept) } == "Another driver accepted this ride first.")
        #expect(conflict { _ = try RideStatus.completed.after(.accept) } == "Another driver accepted this ride first.")
        #expect(conflict { _ = try RideStatus.expired.after(.accept) } == "This ride request is no longer open.")
        #expect(
            conflict { _ = try RideStatus.accepted.after(.mark(.started)) }
                == "A ride is marked started once it is arrived; this one is accepted.")
        #expect(
            conflict { _ = try RideStatus.started.after(.cancel) }
                == "This ride is started; it can no longer be cancelled.")
        #expect(
            conflict { _ = try RideStatus.accepted.after(.refuseCode) }
                == "This ride is accepted; a code is entered only once its driver has arrived.")
    }

    @Test func whoTheCallerIsToARide() {
        let (rider, driver) = (Self.rider, Self.driver)

        #expect(RideRules.party(rider, riderId: rider, driverId: driver) == .rider)
        #expect(RideRules.party(rider, riderId: rider, driverId: nil) == .rider)
        #expect(RideRules.party(driver, riderId: rider, driverId: driver) == .driver)
        #expect(RideRules.party(UUID(), riderId: rider, driverId: driver) == nil)
        #expect(RideRules.party(driver, riderId: rider, driverId: nil) == nil)
    }

    @Test func theRiderCancelsAndTheDriverGivesUpOnlyBeforeTheRideStarted() {
        let allowed: [(RideParty, RideStatus)] = [
            (.rider, .open), (.rider, .accepted), (.rider, .arrived), (.driver, .accepted), (.driver, .arrived),
        ]

        for party in RideParty.allCases {
            for status in RideStatus.allCases {
                let isAllowed = allowed.contains { $0 == (party, status) }
                let refusal = conflict { try RideRules.requireCancellable(by: party, from: status) }
                #expect((refusal == nil) == isAllowed, "\(party) cancels \(status)")
            }
        }
    }

    @Test func onlyTheDriverMarksAndOnlyInOrder() {
        for party in RideParty.allCases {
            for step in RideStep.allCases {
                for status in RideStatus.allCases {
                    let expected: RideStatus? = party == .driver && status == step.from ? step.to : nil
                    let next = try? RideRules.status(after: step, by: party, from: status)
                    let refusal = conflict { _ = try RideRules.status(after: step, by: party, from: status) }

                    #expect(next == expected, "\(party) marks \(step) of \(status)")
                    if party == .rider {
                        #expect(refusal == "Only the ride's driver marks it \(step.rawValue).")
                    }
                }
            }
        }
        #expect(RideStep.allCases.map(\.from) == [.accepted, .arrived, .started])
        #expect(RideStep.allCases.map(\.to) == [.arrived, .started, .completed])
    }

    @Test func aRefusedAcceptSaysWhyForEveryStatus() {
        for status in RideStatus.allCases {
            for isExpired in [false, true] {
                let own = RideRules.refusalToAccept(isOwn: true, status: status, isExpired: isExpired)
                let other = RideRules.refusalToAccept(isOwn: false, status: status, isExpired: isExpired)
                let expected =
                    switch status {
                    case .open where isExpired: "This ride request has expired."
                    case .open, .cancelled, .expired: "This ride request is no longer open."
                    case .accepted, .arrived, .started, .completed: "Another driver accepted this ride first."
                    }

                #expect(detail(own) == "You cannot accept your own ride request.")
                #expect(detail(other) == expected, "\(status), expired: \(isExpired)")
            }
        }
    }

    @Test func aDriverAcceptsWithAProfileAndNoOtherRideAndARetryGetsTheirRide() throws {
        let ride = Ride(
            id: UUID(), riderId: Self.rider, riderName: "Riikka", pickup: RideSpot(lat: 60.17, lon: 24.95),
            dropoff: nil, note: nil, status: .accepted,
            driver: RideDriver(id: Self.driver, name: "Kalle", car: "Red Skoda", seats: 3, position: nil),
            matchId: UUID(), expiresAt: Date(), createdAt: Date(), acceptedAt: Date(), arrivedAt: nil, startedAt: nil,
            finishedAt: nil)

        for status in RideStatus.allCases {
            var held = ride
            held.status = status
            #expect(RideRules.isAcceptRetry(held, by: Self.driver) == status.isUnderway)
            #expect(!RideRules.isAcceptRetry(held, by: UUID()))
        }
        #expect(conflict { _ = try RideRules.requireDriverProfile(nil as Driver?) } != nil)
        #expect(try RideRules.requireDriverProfile(7) == 7)
        #expect(conflict { try RideRules.refuseSecondRide(hasRideUnderway: true) }?.contains("under way") == true)
        #expect(conflict { try RideRules.refuseSecondRide(hasRideUnderway: false) } == nil)
    }

    @Test func theRiderIsToldWhereTheDriverIsOnlyWhileTheyAreOnline() {
        let position = LivePosition(lat: 60.17, lon: 24.95, at: Date())
        var driver = Driver(
            userId: Self.driver, name: "Kalle", car: "Red Skoda", seats: 3, isOnline: true, position: position,
            updatedAt: Date())

        #expect(
            RideRules.rideDriver(driver)
                == RideDriver(id: Self.driver, name: "Kalle", car: "Red Skoda", seats: 3, position: position))
        driver.isOnline = false
        #expect(RideRules.rideDriver(driver).position == nil)
    }

    @Test func aRiderHasOneRequestAndARetryOfAnotherRidersIdConflicts() {
        #expect(conflict { try RideRules.requireOwnRequest(riderId: Self.rider, caller: Self.rider) } == nil)
        #expect(conflict { try RideRules.requireOwnRequest(riderId: Self.driver, caller: Self.rider) } != nil)
        #expect(conflict { try RideRules.requireOwnRequest(riderId: nil, caller: Self.rider) } != nil)
        #expect(conflict { try RideRules.refuseSecondRequest(hasUnfinishedRequest: false) } == nil)
        #expect(
            conflict { try RideRules.refuseSecondRequest(hasUnfinishedRequest: true) }?.contains("cancel it") == true)
    }

    @Test func anOpenRideIsOfferedRoundByRoundAndNothingElseIs() {
        var settings = RideSettings()
        settings.offerCount = 2
        settings.offerRadiusMeters = 500
        settings.offerRounds = 3
        settings.offerWindow = 15
        let now = Date(timeIntervalSince1970: 1_000)

        for status in RideStatus.allCases where status != .open {
            for last in 0...4 {
                #expect(RideRules.offering(status: status, afterRound: last, now: now, settings: settings) == .nothing)
            }
        }
        let offerings = (0...4).map { RideRules.offering(status: .open, afterRound: $0, now: now, settings: settings) }

        #expect(offerings[0] == .round(OfferRound(number: 1, radiusMeters: 500, count: 2), next: now + 15))
        #expect(offerings[1] == .round(OfferRound(number: 2, radiusMeters: 1000, count: 4), next: now + 15))
        #expect(offerings[2] == .round(OfferRound(number: 3, radiusMeters: 2000, count: 6), next: nil))
        #expect(offerings[3] == .noMoreRounds && offerings[4] == .noMoreRounds)
    }
}
