import Testing

@testable import Delivery
@testable import Matching
@testable import MatchingCore

@Suite struct DeliveryStatesTests {
    /// Every pair of a state machine: the allowed ones give the expected state, all others are refused.
    func check<State: CaseIterable & Equatable, Action: CaseIterable & Equatable>(
        _ allowed: [(State, Action, State)], after: (State, Action) throws -> State
    ) {
        for state in State.allCases {
            for action in Action.allCases {
                let expected = allowed.first { $0.0 == state && $0.1 == action }?.2
                do {
                    let next = try after(state, action)
                    #expect(next == expected, "\(state) after \(action)")
                } catch {
                    #expect(expected == nil, "\(state) after \(action) was refused")
                }
            }
        }
    }

    @Test func runTransitions() {
        let allowed: [(RunStatus, RunStatus.Action, RunStatus)] = [
            (.open, .checkOut, .closed), (.open, .expire, .expired),
        ]
        check(allowed) { try $0.after($1) }
    }

    @Test func orderTransitions() {
        let allowed: [(OrderStatus, OrderStatus.Action, OrderStatus)] = [
            (.waiting, .offer, .offered), (.offered, .offerEnded, .waiting), (.offered, .accept, .matched),
            (.matched, .complete, .completed), (.waiting, .cancel, .cancelled), (.offered, .cancel, .cancelled),
            (.matched, .cancel, .cancelled), (.waiting, .expire, .expired), (.offered, .expire, .expired),
            (.matched, .delivererCancelled, .waiting),
        ]
        check(allowed) { try $0.after($1) }
    }

    @Test func offerTransitions() {
        let allowed: [(OfferStatus, OfferStatus.Action, OfferStatus)] = [
            (.pending, .accept, .accepted), (.pending, .decline, .declined), (.pending, .expire, .expired),
            (.pending, .withdraw, .withdrawn),
        ]
        check(allowed) { try $0.after($1) }
    }

    @Test func matchTransitions() {
        let allowed: [(MatchStatus, MatchStatus.Action, MatchStatus)] = [
            (.active, .complete, .completed), (.active, .cancel, .cancelled),
        ]
        check(allowed) { try $0.after($1) }
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
}
