import Foundation
import TestSupport
import Testing

@testable import Exchange
@testable import MatchingCore

/// The exchange flow's rules, without a database: every state with every action.
@Suite struct ExchangeStatesTests {
    @Test func listingTransitions() {
        let allowed: [(ListingStatus, ListingStatus.Action, ListingStatus)] = [
            (.active, .edit, .active), (.active, .withdraw, .withdrawn), (.active, .agree, .inProgress),
            (.inProgress, .exchangeCancelled, .active), (.inProgress, .exchangeCompleted, .exchanged),
        ]
        expectTransitions(allowed) { try $0.after($1) }
    }

    @Test func anExchangeIsExchangedOnceBothMarkItAndMarkingAgainChangesNothing() throws {
        let agreed = ExchangeProgress(status: .inProgress)
        let ownerDone = try #require(try agreed.completed(by: .owner))
        let bothDone = try #require(try ownerDone.completed(by: .taker))

        #expect(ownerDone == ExchangeProgress(status: .inProgress, ownerCompleted: true, takerCompleted: false))
        #expect(try ownerDone.completed(by: .owner) == nil)
        #expect(try agreed.completed(by: .taker)?.status == .inProgress)
        #expect(bothDone == ExchangeProgress(status: .exchanged, ownerCompleted: true, takerCompleted: true))
        for side in ExchangeSide.allCases {
            #expect(try bothDone.completed(by: side) == nil)
            #expect(throws: MatchingError.self) { try ExchangeProgress(status: .cancelled).completed(by: side) }
        }
    }

    @Test func onlyAnExchangeInProgressIsCancelledAndOnlyAnExchangedOneReviewed() throws {
        for status in ExchangeStatus.allCases {
            let progress = ExchangeProgress(status: status, ownerCompleted: true)
            if status == .inProgress {
                #expect(try progress.cancelled() == ExchangeProgress(status: .cancelled, ownerCompleted: true))
            } else {
                #expect(throws: MatchingError.self) { try progress.cancelled() }
            }
            if status == .exchanged {
                try progress.requireReviewable()
            } else {
                #expect(throws: MatchingError.self) { try progress.requireReviewable() }
            }
        }
    }

    @Test func anyoneButTheOwnerAgreesToAnActiveListing() throws {
        let (owner, taker) = (UUID(), UUID())

        #expect(try ExchangeRules.agreement(to: .active, ownerId: owner, caller: taker) == .inProgress)
        #expect(throws: MatchingError.conflict("You cannot agree to your own listing.")) {
            try ExchangeRules.agreement(to: .active, ownerId: owner, caller: owner)
        }
        for status in ListingStatus.allCases where status != .active {
            #expect(throws: MatchingError.conflict("Someone else agreed to this listing first.")) {
                try ExchangeRules.agreement(to: status, ownerId: owner, caller: taker)
            }
        }
        #expect(ExchangeRules.side(of: owner, ownerId: owner, takerId: taker) == .owner)
        #expect(ExchangeRules.side(of: taker, ownerId: owner, takerId: taker) == .taker)
        #expect(ExchangeRules.side(of: UUID(), ownerId: owner, takerId: taker) == nil)
    }
}
