import Contracts
import Foundation
import ServiceKit
import TestSupport
import Testing

@testable import Delivery
@testable import MatchingCore

@Suite struct DeliveryStatesTests {
    @Test func runTransitions() {
        let allowed: [(RunStatus, RunStatus.Action, RunStatus)] = [
            (.open, .checkOut, .closed), (.open, .expire, .expired),
        ]
        expectTransitions(allowed) { try $0.after($1) }
    }

    @Test func orderTransitions() {
        let allowed: [(OrderStatus, OrderStatus.Action, OrderStatus)] = [
            (.waiting, .offer, .offered), (.offered, .offerEnded, .waiting), (.offered, .accept, .matched),
            (.matched, .complete, .completed), (.waiting, .cancel, .cancelled), (.offered, .cancel, .cancelled),
            (.matched, .cancel, .cancelled), (.waiting, .expire, .expired), (.offered, .expire, .expired),
            (.matched, .delivererCancelled, .waiting), (.waiting, .take, .matched), (.offered, .take, .matched),
        ]
        expectTransitions(allowed) { try $0.after($1) }
    }

    @Test func offerTransitions() {
        let allowed: [(OfferStatus, OfferStatus.Action, OfferStatus)] = [
            (.pending, .accept, .accepted), (.pending, .decline, .declined), (.pending, .expire, .expired),
            (.pending, .withdraw, .withdrawn),
        ]
        expectTransitions(allowed) { try $0.after($1) }
    }

    @Test func matchTransitions() {
        let allowed: [(MatchStatus, MatchStatus.Action, MatchStatus)] = [
            (.active, .complete, .completed), (.active, .cancel, .cancelled),
        ]
        expectTransitions(allowed) { try $0.after($1) }
    }

    @Test func dispatchPicksTheNearestRunWithRoomNotOfferedBefore() {
        let candidates = [
            Dispatch.Candidate(runId: "far", detourMeters: 280, freeSeats: 1, wasOfferedBefore: false),
            Dispatch.Candidate(runId: "full", detourMeters: 10, freeSeats: 0, wasOfferedBefore: false),
            Dispatch.Candidate(runId: "declined", detourMeters: 20, freeSeats: 2, wasOfferedBefore: true),
            Dispatch.Candidate(runId: "near", detourMeters: 50, freeSeats: 1, wasOfferedBefore: false),
            Dispatch.Candidate(runId: "outside", detourMeters: 301, freeSeats: 4, wasOfferedBefore: false),
        ]

        #expect(Dispatch.choose(candidates, radius: 300)?.runId == "near")
        #expect(Dispatch.choose(candidates.filter { $0.runId != "near" }, radius: 300)?.runId == "far")
        #expect(Dispatch.choose(candidates.filter { $0.runId == "outside" }, radius: 300) == nil)
    }

    /// What a rule answers: its value, or the problem a client sees. NB: the rules throw `MatchingError` alone, but
    /// a closure inside `#expect` throws `any Error`.
    func answer<T>(_ rule: () throws -> T) -> Result<T, Problem> {
        do {
            return .success(try rule())
        } catch {
            return .failure((error as! MatchingError).problem)
        }
    }

    func refusal<T>(_ rule: () throws -> T) -> Problem? {
        if case .failure(let problem) = answer(rule) { problem } else { nil }
    }

    @Test func runsOrdersAndOffersAreTheirOwnersAlone() {
        let (owner, stranger) = (UUID(), UUID())
        let run = Fixture.run(deliverer: owner)
        let order = Fixture.order(orderer: owner)
        let offer = Fixture.offer(deliverer: owner)
        let shown = Fixture.shownOrder()

        #expect(answer { try DeliveryAccess.run(run, userId: owner) } == .success(run))
        #expect(answer { try DeliveryAccess.order(order, userId: owner) } == .success(order))
        #expect(answer { try DeliveryAccess.offer(offer, userId: owner) } == .success(offer))
        #expect(answer { try DeliveryAccess.order(shown, ordererId: owner, userId: owner) } == .success(shown))
        #expect(refusal { try DeliveryAccess.run(run, userId: stranger) } == MatchingError.notFound("run").problem)
        #expect(
            refusal { try DeliveryAccess.order(order, userId: stranger) } == MatchingError.notFound("order").problem)
        #expect(
            refusal { try DeliveryAccess.offer(offer, userId: stranger) } == MatchingError.notFound("offer").problem)
        #expect(
            refusal { try DeliveryAccess.order(shown, ordererId: owner, userId: stranger) }
                == MatchingError.notFound("order").problem)
        #expect(refusal { try DeliveryAccess.run(nil, userId: owner) } == MatchingError.notFound("run").problem)
        #expect(
            refusal { try DeliveryAccess.order(nil as OrderState?, userId: owner) }
                == MatchingError.notFound("order").problem)
        #expect(refusal { try DeliveryAccess.offer(nil, userId: owner) } == MatchingError.notFound("offer").problem)
        #expect(
            refusal { try DeliveryAccess.order(nil, ordererId: nil, userId: owner) }
                == MatchingError.notFound("order").problem)
        #expect(
            refusal { try DeliveryAccess.order(shown, ordererId: nil, userId: owner) }
                == MatchingError.notFound("order").problem)
    }

    @Test func aRetriedIdIsItsOwnersAlone() {
        let (owner, stranger) = (UUID(), UUID())

        #expect(refusal { try DeliveryAccess.checkRetry(ownerId: owner, userId: owner) } == nil)
        #expect(
            refusal { try DeliveryAccess.checkRetry(ownerId: owner, userId: stranger) }
                == MatchingError.conflict("That id is taken.").problem)
    }

    @Test func aMatchIsItsMembersEachOnTheirSide() {
        let (orderer, deliverer, stranger) = (UUID(), UUID(), UUID())
        let match = Fixture.match(orderer: orderer, deliverer: deliverer)

        #expect(match.side(of: orderer) == .orderer && match.side(of: deliverer) == .deliverer)
        #expect(match.side(of: stranger) == nil)
        #expect(match.isMember(orderer) && match.isMember(deliverer) && !match.isMember(stranger))
        for (userId, side) in [(orderer, MatchSide.orderer), (deliverer, .deliverer)] {
            #expect(answer { try DeliveryAccess.match(match, userId: userId) } == .success(match))
            #expect(answer { try DeliveryAccess.side(in: match, userId: userId).side } == .success(side))
        }
        for candidate in [match, nil] {
            let userId = candidate == nil ? orderer : stranger
            #expect(
                refusal { try DeliveryAccess.match(candidate, userId: userId) }
                    == MatchingError.notFound("match").problem)
            #expect(
                refusal { try DeliveryAccess.side(in: candidate, userId: userId) }
                    == MatchingError.notFound("match").problem)
        }
    }

    @Test func onlyTheDelivererReportsAPositionAndOnlyWhileTheMatchIsActive() {
        let (orderer, deliverer, stranger) = (UUID(), UUID(), UUID())

        for status in MatchStatus.allCases {
            let match = Fixture.match(orderer: orderer, deliverer: deliverer, status: status)
            #expect(
                answer { try DeliveryAccess.positionMatch(match, userId: deliverer) }
                    == (status == .active
                        ? .success(match)
                        : .failure(
                            MatchingError.conflict("The match is \(status.rawValue); its position is no longer shared.")
                                .problem)),
                "\(status)")
            for userId in [orderer, stranger] {
                #expect(
                    refusal { try DeliveryAccess.positionMatch(match, userId: userId) }
                        == MatchingError.notFound("match").problem)
            }
        }
        #expect(
            refusal { try DeliveryAccess.positionMatch(nil, userId: deliverer) }
                == MatchingError.notFound("match").problem)
    }

    @Test func theOrdererSeesTheDeliverersPositionWhileTheMatchIsActive() {
        let position = LivePosition(lat: 60.17, lon: 24.95, at: Date())

        for status in MatchStatus.allCases {
            for delivererPosition in [position, nil] {
                let match = Fixture.match(status: status, position: delivererPosition)
                #expect(match.sharedPosition == (status == .active ? delivererPosition : nil), "\(status)")
            }
        }
    }

    @Test func anOrderMayAskForAnotherDeliverersOpenRunAtItsRestaurantOnItsCampus() {
        let (orderer, deliverer) = (UUID(), UUID())
        let restaurant = Fixture.place
        let elsewhere = PlaceSummary(id: UUID(), name: "Unicafe Kaivopiha", latitude: 60.17, longitude: 24.94)
        let ask = { (run: Run?, runCampus: String?) in
            self.refusal {
                try DeliveryAccess.checkRequestedRun(
                    run, runCampus: runCampus, restaurantIds: [restaurant.id!], ordererId: orderer,
                    campus: "helsinki.fi")
            }
        }
        let missing = MatchingError.notFound("run at that restaurant").problem

        #expect(ask(nil, nil) == missing)
        #expect(ask(Fixture.run(deliverer: deliverer, restaurant: elsewhere), "helsinki.fi") == missing)
        #expect(ask(Fixture.run(deliverer: orderer), "helsinki.fi") == missing)
        #expect(ask(Fixture.run(deliverer: deliverer), "aalto.fi") == missing)
        for status in RunStatus.allCases {
            let run = Fixture.run(deliverer: deliverer, status: status)
            #expect(
                ask(run, "helsinki.fi")
                    == (status == .open ? nil : MatchingError.conflict("That run is \(status.rawValue).").problem),
                "\(status)")
        }
    }

    /// Every offer, order and run state, expired or not, full or not: only a pending offer in its window, on an open
    /// run with room, of an offered order, is accepted; the first reason to refuse is the one given.
    @Test func acceptingAnOffer() {
        for offerStatus in OfferStatus.allCases {
            for isExpired in [false, true] {
                for runStatus in RunStatus.allCases {
                    for isFull in [false, true] {
                        for orderStatus in OrderStatus.allCases {
                            let offer = Fixture.offer(status: offerStatus, isExpired: isExpired)
                            let run = Fixture.run(status: runStatus, held: isFull ? 2 : 1, capacity: 2)
                            let order = Fixture.order(status: orderStatus)
                            let expected: MatchingError? =
                                offerStatus != .pending
                                ? .conflict("The offer is \(offerStatus.rawValue).")
                                : isExpired
                                    ? .conflict("The offer has expired.")
                                    : runStatus != .open
                                        ? .conflict("The run is \(runStatus.rawValue).")
                                        : isFull
                                            ? .conflict("The run is full.")
                                            : orderStatus != .offered
                                                ? .conflict("The order is \(orderStatus.rawValue).") : nil

                            let answered = answer { try offer.accepted(order: order, run: run) }

                            switch answered {
                            case .success(let next):
                                #expect(expected == nil && next.offer == .accepted && next.order == .matched)
                            case .failure(let problem):
                                #expect(
                                    problem == expected?.problem,
                                    "\(offerStatus) \(isExpired) \(runStatus) \(isFull) \(orderStatus)")
                            }
                        }
                    }
                }
            }
        }
    }

    @Test func cancellingAMatchEndsTheOrderOnTheOrderersWordAndSendsItBackOnTheDeliverers() {
        let allowed: [(MatchSide, OrderStatus, OrderStatus)] = [
            (.orderer, .waiting, .cancelled), (.orderer, .offered, .cancelled), (.orderer, .matched, .cancelled),
            (.deliverer, .matched, .waiting),
        ]

        expectTransitions(allowed.map { ($0.1, $0.0, $0.2) }) { try $0.after($1.orderActionOnCancel) }
    }

    @Test func aMatchIsCompleteOnceBothSidesSaySo() {
        #expect(answer { try MatchStatus.active.needsCompletion() } == .success(true))
        #expect(answer { try MatchStatus.completed.needsCompletion() } == .success(false))
        #expect(
            refusal { try MatchStatus.cancelled.needsCompletion() }
                == MatchingError.conflict("The match is cancelled.").problem)
        for orderer in [false, true] {
            for deliverer in [false, true] {
                #expect(
                    MatchStatus.isComplete(ordererCompleted: orderer, delivererCompleted: deliverer)
                        == (orderer && deliverer))
            }
        }
    }

    @Test func aStudentHasAtMostThreeOpenOrders() {
        for open in 0...5 {
            #expect(
                refusal { try DeliveryRules.checkOpenOrders(open) }
                    == (open < 3
                        ? nil
                        : MatchingError.conflict(
                            "You already have \(open) open orders; cancel one or wait until one is done."
                        )
                        .problem),
                "\(open)")
        }
    }

    @Test func anOrderThatAsksForARunTakesItWhereverItGoes() {
        #expect(Dispatch.radius(requestedRunId: nil, matchRadius: 300) == 300)
        #expect(Dispatch.radius(requestedRunId: UUID(), matchRadius: 300) == .infinity)
    }
}

/// Runs, orders, offers and matches as the rules see them.
private enum Fixture {
    static let place = PlaceSummary(id: UUID(), name: "Unicafe Porthania", latitude: 60.17008, longitude: 24.94891)
    static let building = PlaceSummary(id: UUID(), name: "Porthania", latitude: 60.17018, longitude: 24.94841)

    static func run(
        deliverer: UUID = UUID(), restaurant: PlaceSummary = place, status: RunStatus = .open, held: Int = 0,
        capacity: Int = 1
    ) -> Run {
        Run(
            id: UUID(), delivererId: deliverer, delivererName: "Aino", restaurant: restaurant, destination: building,
            capacity: capacity, held: held, status: status, closesAt: Date(), distanceMeters: nil)
    }

    static func order(orderer: UUID = UUID(), status: OrderStatus = .waiting) -> OrderState {
        OrderState(
            id: UUID(), ordererId: orderer, ordererName: "Olli", status: status, restaurantIds: [place.id!],
            destination: building, requestedRunId: nil, campus: "helsinki.fi", items: "Lunch")
    }

    static func shownOrder() -> Order {
        Order(
            id: UUID(), restaurant: place, restaurants: [place], destination: building, items: "Lunch",
            status: .waiting, requestedRunId: nil,
            matchId: nil, expiresAt: Date(), createdAt: Date())
    }

    static func offer(deliverer: UUID = UUID(), status: OfferStatus = .pending, isExpired: Bool = false) -> OfferState {
        OfferState(
            id: UUID(), orderId: UUID(), runId: UUID(), delivererId: deliverer, status: status, isExpired: isExpired,
            version: 1)
    }

    static func match(
        orderer: UUID = UUID(), deliverer: UUID = UUID(), status: MatchStatus = .active, position: LivePosition? = nil
    ) -> Match {
        Match(
            id: UUID(), orderId: UUID(), runId: UUID(), status: status, ordererId: orderer, ordererName: "Olli",
            delivererId: deliverer, delivererName: "Aino", restaurant: place, destination: building, items: "Lunch",
            ordererCompleted: false, delivererCompleted: false, delivererPosition: position)
    }
}
