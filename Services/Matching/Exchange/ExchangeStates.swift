import Foundation
import MatchingCore

/// The state machines of the exchange flow, without I/O. Every transition not listed is refused with
/// `MatchingError.conflict`, which clients see as 409.

/// Where a listing is in its life: open to agree to, agreed and under way, swapped, or taken back by its owner.
public enum ListingStatus: String, Codable, Sendable, CaseIterable {
    case active
    case inProgress = "in_progress"
    case exchanged, withdrawn

    enum Action: Sendable, CaseIterable {
        /// Its owner changes it.
        case edit
        /// Its owner takes it back.
        case withdraw
        /// Another student agrees to it: the first makes the exchange.
        case agree
        /// The exchange made from it is called off: it is open again.
        case exchangeCancelled
        /// Both parties marked the exchange done.
        case exchangeCompleted
    }

    func after(_ action: Action) throws(MatchingError) -> ListingStatus {
        switch (self, action) {
        case (.active, .edit): .active
        case (.active, .withdraw): .withdrawn
        case (.active, .agree): .inProgress
        case (.inProgress, .exchangeCancelled): .active
        case (.inProgress, .exchangeCompleted): .exchanged
        case (_, .edit), (_, .withdraw):
            throw .conflict("Only an active listing can be changed; this one is \(rawValue).")
        case (_, .agree): throw .conflict("Someone else agreed to this listing first.")
        default: throw .conflict("The listing is \(rawValue).")
        }
    }
}

/// Where an exchange is: agreed and under way, done by both, or called off by one.
public enum ExchangeStatus: String, Codable, Sendable, CaseIterable {
    case inProgress = "in_progress"
    case exchanged, cancelled
}

/// Which party of an exchange a student is.
enum ExchangeSide: String, Sendable, CaseIterable {
    case owner, taker
}

/// An exchange as its transitions see it: its status and which party has marked it done.
struct ExchangeProgress: Sendable, Equatable {
    var status: ExchangeStatus
    var ownerCompleted = false
    var takerCompleted = false

    /// Either party calls it off while it is in progress.
    func cancelled() throws(MatchingError) -> ExchangeProgress {
        guard status == .inProgress else { throw .conflict("This exchange is no longer in progress.") }
        return ExchangeProgress(status: .cancelled, ownerCompleted: ownerCompleted, takerCompleted: takerCompleted)
    }

    /// `side` marks it done; when both have, it is exchanged. Nil when nothing changes: the side marked it before, or
    /// it is exchanged already.
    func completed(by side: ExchangeSide) throws(MatchingError) -> ExchangeProgress? {
        switch status {
        case .cancelled: throw .conflict("This exchange was cancelled.")
        case .exchanged: return nil
        case .inProgress:
            var next = self
            switch side {
            case .owner: next.ownerCompleted = true
            case .taker: next.takerCompleted = true
            }
            guard next != self else { return nil }
            if next.ownerCompleted && next.takerCompleted { next.status = .exchanged }
            return next
        }
    }

    /// A party may review the other once, when both have marked it done.
    func requireReviewable() throws(MatchingError) {
        guard status == .exchanged else {
            throw .conflict("An exchange can be reviewed once both have marked it done.")
        }
    }
}

extension ExchangeRules {
    /// Who may agree to a listing: anyone but its owner, while it is active. Answers the listing's next status.
    static func agreement(to status: ListingStatus, ownerId: UUID, caller: UUID) throws(MatchingError) -> ListingStatus
    {
        guard ownerId != caller else { throw .conflict("You cannot agree to your own listing.") }
        return try status.after(.agree)
    }

    /// The side of an exchange `userId` is on, nil for anyone else.
    static func side(of userId: UUID, ownerId: UUID, takerId: UUID) -> ExchangeSide? {
        userId == ownerId ? .owner : userId == takerId ? .taker : nil
    }
}
