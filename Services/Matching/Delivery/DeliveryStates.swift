import MatchingCore

/// The state machines of the delivery flow, without I/O. Every transition not listed is refused with
/// `MatchingError.conflict`, which clients see as 409.

/// A deliverer's check-in at a restaurant.
public enum RunStatus: String, Codable, Sendable, CaseIterable {
    case open
    /// Checked out by the deliverer.
    case closed
    /// Its window passed.
    case expired

    enum Action: Sendable, CaseIterable { case checkOut, expire }

    func after(_ action: Action) throws(MatchingError) -> RunStatus {
        switch (self, action) {
        case (.open, .checkOut): .closed
        case (.open, .expire): .expired
        default: throw .conflict("The run is \(rawValue).")
        }
    }

    var isOpen: Bool { self == .open }
}

/// An orderer's request.
public enum OrderStatus: String, Codable, Sendable, CaseIterable {
    /// No deliverer has it; a run that opens later is matched against it.
    case waiting
    /// Offered to one deliverer, who has not answered yet.
    case offered
    case matched
    case completed
    case cancelled
    case expired

    enum Action: Sendable, CaseIterable {
        case offer, offerEnded, accept, complete, cancel, expire
        /// The deliverer dropped the accepted order: it goes back to dispatch.
        case delivererCancelled
    }

    func after(_ action: Action) throws(MatchingError) -> OrderStatus {
        switch (self, action) {
        case (.waiting, .offer): .offered
        case (.offered, .offerEnded): .waiting
        case (.offered, .accept): .matched
        case (.matched, .complete): .completed
        case (.waiting, .cancel), (.offered, .cancel), (.matched, .cancel): .cancelled
        case (.waiting, .expire), (.offered, .expire): .expired
        case (.matched, .delivererCancelled): .waiting
        default: throw .conflict("The order is \(rawValue).")
        }
    }

    var isFinished: Bool { self == .completed || self == .cancelled || self == .expired }
}

/// One order offered to one deliverer for a short window.
public enum OfferStatus: String, Codable, Sendable, CaseIterable {
    case pending
    case accepted
    case declined
    case expired
    /// The order or the run went away before the deliverer answered.
    case withdrawn

    enum Action: Sendable, CaseIterable { case accept, decline, expire, withdraw }

    func after(_ action: Action) throws(MatchingError) -> OfferStatus {
        switch (self, action) {
        case (.pending, .accept): .accepted
        case (.pending, .decline): .declined
        case (.pending, .expire): .expired
        case (.pending, .withdraw): .withdrawn
        default: throw .conflict("The offer is \(rawValue).")
        }
    }
}

/// An orderer and a deliverer agreed on an order.
public enum MatchStatus: String, Codable, Sendable, CaseIterable {
    case active
    case completed
    case cancelled

    enum Action: Sendable, CaseIterable { case complete, cancel }

    func after(_ action: Action) throws(MatchingError) -> MatchStatus {
        switch (self, action) {
        case (.active, .complete): .completed
        case (.active, .cancel): .cancelled
        default: throw .conflict("The match is \(rawValue).")
        }
    }
}

/// Which side of a match a caller is.
enum MatchSide: String, Codable, Sendable {
    case orderer
    case deliverer
}
