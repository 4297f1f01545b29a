import Contracts
import Foundation
import MatchingCore
import Messaging
import Postgres
import ServiceKit

/// The exchange flow's use cases: each one transaction that locks the rows it changes, asks the rules
/// (`ExchangeStates`), writes through `ExchangePostgresRepository`, and appends its events. NB: a listing's row lock
/// makes any number of takers on any number of replicas agree one after the other, so exactly one wins.
public struct ExchangeSteps: Sendable {
    let database: PostgresPool
    /// The rule for the points students give: a listing's place and where one browses from lie on their campus.
    let campuses: CampusPoints

    public init(database: PostgresPool, campuses: CampusPoints) {
        self.database = database
        self.campuses = campuses
    }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (ExchangePostgresRepository) throws -> T)
        async throws -> T
    {
        try await database.transaction { try body(ExchangePostgresRepository(connection: $0)) }
    }

    // MARK: Listings

    /// Lists `draft` as the caller's; a retry with the same client `id` returns the first listing. A place given as a
    /// point lies on the caller's campus (400 naming `place`).
    public func createListing(id: UUID?, _ draft: ListingDraft, caller: Identity) async throws -> Listing {
        try campuses.require(draft.place, of: caller.campus, field: "place")
        return try await transaction { rows in
            try ReadModels.requireActive(caller.userId, on: rows.connection)
            let listingId = id ?? UUID()
            if let existing = try rows.owner(of: listingId) {
                guard existing == caller.userId else { throw MatchingError.conflict("That id is taken.") }
                return try rows.listing(listingId, caller: caller)!
            }
            let location = try ReadModels.location(
                of: draft.place, campus: caller.campus, what: "place", on: rows.connection)
            try Self.requireOwnImage(draft.photoId, caller: caller, on: rows.connection)
            let inserted = try rows.insertListing(listingId, draft, at: location, caller: caller)
            // A retry racing its first attempt: the first one's listing is the answer.
            guard try inserted || rows.owner(of: listingId) == caller.userId else {
                throw MatchingError.conflict("That id is taken.")
            }
            return try rows.listing(listingId, caller: caller)!
        }
    }

    /// A listing of the caller's campus that is not withdrawn: a withdrawn listing is gone (its owner still finds it
    /// among their own).
    public func listing(_ id: UUID, caller: Identity) async throws -> Listing? {
        try await database.withConnection { connection in
            try ExchangePostgresRepository(connection: connection).listing(id, caller: caller)
                .flatMap { $0.status == .withdrawn ? nil : $0 }
        }
    }

    /// The owner changes an active listing; others get 404, a listing no longer active 409. A new place given as a
    /// point lies on the caller's campus (400 naming `place`).
    public func editListing(_ id: UUID, _ edit: ListingEdit, caller: Identity) async throws -> Listing {
        if let place = edit.place { try campuses.require(place, of: caller.campus, field: "place") }
        return try await transaction { rows in
            let listing = try Self.lockOwnListing(id, caller: caller, rows: rows)
            _ = try listing.status.after(.edit)
            let edited = edit.applied(to: listing.draft)
            // The place is looked up again only when it changes: a place retired since keeps the listing where it was.
            let location =
                edit.place == nil
                ? (point: listing.point, placeId: listing.placeId)
                : try ReadModels.location(of: edited.place, campus: caller.campus, what: "place", on: rows.connection)
            if edit.photoId != nil { try Self.requireOwnImage(edited.photoId, caller: caller, on: rows.connection) }
            try rows.updateListing(id, to: edited, at: location)
            return try rows.listing(id, caller: caller)!
        }
    }

    /// The owner takes an active listing back, and the questions about it close; others get 404, a listing no longer
    /// active 409.
    public func withdrawListing(_ id: UUID, caller: Identity) async throws -> Listing {
        try await transaction { rows in
            let listing = try Self.lockOwnListing(id, caller: caller, rows: rows)
            try rows.setListingStatus(id, try listing.status.after(.withdraw))
            try Self.closeQuestions(where: "listing_id = \(id)", ending: .withdrawn, rows: rows)
            return try rows.listing(id, caller: caller)!
        }
    }

    /// A page of the campus's active listings (or the caller's own of any status), filtered as `query` asks:
    /// nearest first near a point on the caller's campus (400 naming `near`), else newest first.
    public func browse(_ query: ListingQuery, caller: Identity) async throws -> ListingPage {
        if let near = query.near { try campuses.require(near, of: caller.campus, field: "near") }
        if let after = query.after, after.order != query.order {
            throw MatchingError.invalid(field: "after", "after belongs to a browse in another order.")
        }
        guard let text = query.text else {
            return try await database.withConnection { connection in
                try Self.page(
                    query, words: [], caller: caller, rows: ExchangePostgresRepository(connection: connection))
            }
        }
        return try await transaction { rows in
            var words: [[String]] = []
            for word in try rows.typedWords(text) {
                let known = try rows.knownWords(matching: word)
                guard !known.isEmpty else { return ListingPage(listings: [], next: nil) }
                words.append(known)
            }
            guard !words.isEmpty else { return ListingPage(listings: [], next: nil) }
            return try Self.page(query, words: words, caller: caller, rows: rows)
        }
    }

    // MARK: Exchanges

    /// The caller agrees to an active listing of another's: the first to agree makes the exchange, everyone after
    /// them gets 409 (a retry of the winner gets its exchange again). The owner is told and the chat opens.
    public func agree(to listingId: UUID, offering: String?, caller: Identity) async throws -> Exchange {
        try await transaction { rows in
            let listing = try Self.lockListingWithItsPair(listingId, caller: caller, rows: rows)
            if listing.status != .active,
                let mine = try rows.exchangeInProgress(listingId: listingId, takerId: caller.userId)
            {
                return try rows.exchange(mine, caller: caller)!
            }
            let next = try ExchangeRules.agreement(to: listing.status, ownerId: listing.ownerId, caller: caller.userId)
            try rows.setListingStatus(listingId, next)
            let ownerName = try rows.userName(listing.ownerId) ?? listing.ownerName
            // The caller's question about the listing becomes the exchange: the swap goes on in its conversation. The
            // others' questions close: the listing went to someone else.
            let asked = try rows.endQuestions(
                where: "listing_id = \(listingId) AND asker_id = \(caller.userId)", status: .agreed)
            try Self.closeQuestions(where: "listing_id = \(listingId)", ending: .superseded, rows: rows)
            let exchangeId = asked.first?.id ?? UUID()
            try rows.insertExchange(
                exchangeId, listingId: listingId, ownerId: listing.ownerId, offering: offering, caller: caller)
            let offered = listing.draft.offered
            try Outbox.append(
                ExchangeAgreed(
                    exchangeId: exchangeId, listingId: listingId, campus: caller.campus, offered: offered,
                    ownerId: listing.ownerId, takerId: caller.userId, takerName: caller.name, offering: offering,
                    version: 1),
                on: rows.connection)
            try FlowMatch(
                id: exchangeId, flow: ExchangeFlow.name, campus: caller.campus,
                members: [
                    MatchMember(userId: listing.ownerId, name: ownerName, role: ExchangeSide.owner.rawValue),
                    MatchMember(userId: caller.userId, name: caller.name, role: ExchangeSide.taker.rawValue),
                ],
                subject: ExchangeRules.subject(offered: offered, offering: offering, wanted: listing.draft.wanted)
            ).announceOpened(on: rows.connection)
            return try rows.exchange(exchangeId, caller: caller)!
        }
    }

    /// An exchange, to its two parties.
    public func exchange(_ id: UUID, caller: Identity) async throws -> Exchange? {
        try await database.withConnection {
            try ExchangePostgresRepository(connection: $0).exchange(id, caller: caller)
        }
    }

    /// Either party calls off an exchange in progress: the listing is active again, the other is told, the chat
    /// closes.
    public func cancel(_ exchangeId: UUID, caller: Identity) async throws -> Exchange {
        try await transaction { rows in
            guard let exchange = try rows.lockExchange(exchangeId, caller: caller) else {
                throw MatchingError.notFound("exchange")
            }
            let version = try rows.updateExchange(
                exchangeId, to: try exchange.progress.cancelled(), cancelledBy: caller.userId)
            // NB: exchange, then listing, as completing locks them.
            if let listing = try rows.lockListing(exchange.listingId, campus: caller.campus),
                let reopened = try? listing.status.after(.exchangeCancelled)
            {
                try rows.setListingStatus(exchange.listingId, reopened)
            }
            try Outbox.append(
                ExchangeCancelled(
                    exchangeId: exchangeId, listingId: exchange.listingId, cancelledBy: caller.userId,
                    otherPartyId: caller.userId == exchange.ownerId ? exchange.takerId : exchange.ownerId,
                    version: version),
                on: rows.connection)
            try Self.match(exchangeId, campus: caller.campus, ownerId: exchange.ownerId, takerId: exchange.takerId)
                .announceClosed(.cancelled, version: version, on: rows.connection)
            return try rows.exchange(exchangeId, caller: caller)!
        }
    }

    /// One of two students blocked the other (`a` the blocker): each exchange in progress between them is called
    /// off as a cancellation by the blocker does (the listing active again), with `match.closed` reason `blocked`,
    /// in the transaction of the block's event. Finished exchanges and their reviews stay.
    static func closeBetween(_ a: UUID, _ b: UUID, rows: ExchangePostgresRepository) throws {
        try rows.lockPair(a, b)
        try closeQuestions(
            where: "(asker_id = \(a) AND owner_id = \(b)) OR (asker_id = \(b) AND owner_id = \(a))", ending: .blocked,
            rows: rows)
        for exchange in try rows.lockExchangesInProgress(between: a, b) {
            let version = try rows.updateExchange(exchange.id, to: try exchange.progress.cancelled(), cancelledBy: a)
            if let listing = try rows.lockListing(exchange.listingId, campus: exchange.campus),
                let reopened = try? listing.status.after(.exchangeCancelled)
            {
                try rows.setListingStatus(exchange.listingId, reopened)
            }
            try Outbox.append(
                ExchangeCancelled(
                    exchangeId: exchange.id, listingId: exchange.listingId, cancelledBy: a, otherPartyId: b,
                    version: version),
                on: rows.connection)
            try Self.match(exchange.id, campus: exchange.campus, ownerId: exchange.ownerId, takerId: exchange.takerId)
                .announceClosed(.blocked, version: version, on: rows.connection)
        }
    }

    /// A party marks the exchange done; when both have, it and its listing are `exchanged` and the chat closes.
    /// Marking again changes nothing.
    public func complete(_ exchangeId: UUID, caller: Identity) async throws -> Exchange {
        try await transaction { rows in
            // NB: under the exchange's row lock, exactly one of two simultaneous marks sees both done.
            guard let exchange = try rows.lockExchange(exchangeId, caller: caller),
                let side = ExchangeRules.side(of: caller.userId, ownerId: exchange.ownerId, takerId: exchange.takerId)
            else { throw MatchingError.notFound("exchange") }
            guard let next = try exchange.progress.completed(by: side) else {
                return try rows.exchange(exchangeId, caller: caller)!
            }
            let version = try rows.updateExchange(exchangeId, to: next)
            if next.status == .exchanged {
                if let listing = try rows.lockListing(exchange.listingId, campus: caller.campus) {
                    try rows.setListingStatus(exchange.listingId, try listing.status.after(.exchangeCompleted))
                }
                try Outbox.append(
                    ExchangeCompleted(
                        exchangeId: exchangeId, listingId: exchange.listingId,
                        partyIds: [exchange.ownerId, exchange.takerId], version: version),
                    on: rows.connection)
                try Self.match(
                    exchangeId, campus: caller.campus, ownerId: exchange.ownerId, takerId: exchange.takerId
                )
                .announceClosed(.completed, version: version, on: rows.connection)
            }
            return try rows.exchange(exchangeId, caller: caller)!
        }
    }

    /// A party reviews the other once the exchange is done, once; the other's rating counts it.
    public func review(_ exchangeId: UUID, stars: Int, text: String?, caller: Identity) async throws -> ExchangeReview {
        try await transaction { rows in
            try ReadModels.requireActive(caller.userId, on: rows.connection)
            guard let exchange = try rows.exchange(exchangeId, caller: caller) else {
                throw MatchingError.notFound("exchange")
            }
            try ExchangeProgress(status: exchange.status).requireReviewable()
            let revieweeId = exchange.owner.id == caller.userId ? exchange.taker.id : exchange.owner.id
            guard
                let createdAt = try rows.insertReview(
                    exchangeId, by: caller.userId, of: revieweeId, stars: stars, text: text)
            else { throw MatchingError.conflict("You already reviewed this exchange.") }
            return ExchangeReview(
                exchangeId: exchangeId, reviewerId: caller.userId, revieweeId: revieweeId, stars: stars, text: text,
                createdAt: createdAt)
        }
    }

    // MARK: Helpers

    /// A listing of the caller's campus under its row lock, for one who would deal with its owner (an active caller):
    /// 404 when they are in a block with the owner, and for a withdrawn listing to anyone but its owner.
    ///
    /// NB: the pair's lock before the listing's, as a block's closing takes them (then the exchange's, then the
    /// listing's): a block either stops what the caller does or closes what it makes.
    static func lockListingWithItsPair(_ listingId: UUID, caller: Identity, rows: ExchangePostgresRepository) throws
        -> ExchangePostgresRepository.LockedListing
    {
        try ReadModels.requireActive(caller.userId, on: rows.connection)
        if let ownerId = try rows.owner(of: listingId), ownerId != caller.userId {
            try rows.lockPair(ownerId, caller.userId)
            guard try !ReadModels.isBlocked(ownerId, caller.userId, on: rows.connection) else {
                throw MatchingError.notFound("listing")
            }
        }
        guard let listing = try rows.lockListing(listingId, campus: caller.campus),
            listing.status != .withdrawn || listing.ownerId == caller.userId
        else { throw MatchingError.notFound("listing") }
        return listing
    }

    /// The caller's own listing of their campus under its row lock; 404 for anyone else's.
    private static func lockOwnListing(_ id: UUID, caller: Identity, rows: ExchangePostgresRepository) throws
        -> ExchangePostgresRepository.LockedListing
    {
        guard let listing = try rows.lockListing(id, campus: caller.campus), listing.ownerId == caller.userId else {
            throw MatchingError.notFound("listing")
        }
        return listing
    }

    /// The listings of a page and the cursor of the next, from up to `limit + 1` found.
    private static func page(
        _ query: ListingQuery, words: [[String]], caller: Identity, rows: ExchangePostgresRepository
    )
        throws -> ListingPage
    {
        let found = try rows.page(query, words: words, caller: caller)
        let listings = found.prefix(query.limit).map { row in
            var listing = row.listing
            if query.order == .nearest { listing.distanceMeters = row.rank }
            return listing
        }
        let next = found.count > query.limit ? found[query.limit - 1] : nil
        return ListingPage(
            listings: listings,
            next: next.map {
                ListingCursor(
                    order: query.order, rank: $0.rank, createdAtMicroseconds: $0.createdAtMicroseconds,
                    id: $0.listing.id
                ).text
            })
    }

    /// 404 naming `photoId` unless it is an image the caller stored and has not deleted.
    private static func requireOwnImage(_ photoId: UUID?, caller: Identity, on connection: PostgresConnection) throws {
        guard let photoId else { return }
        guard try ReadModels.isOwnImage(photoId, owner: caller.userId, on: connection) else {
            throw MatchingError.notFound("photoId; upload the image with POST /v1/media first")
        }
    }

    /// The exchange as the match its chat belongs to; closing needs only the members' ids.
    private static func match(_ exchangeId: UUID, campus: String, ownerId: UUID, takerId: UUID) -> FlowMatch {
        FlowMatch(
            id: exchangeId, flow: ExchangeFlow.name, campus: campus,
            members: [
                MatchMember(userId: ownerId, name: "", role: ExchangeSide.owner.rawValue),
                MatchMember(userId: takerId, name: "", role: ExchangeSide.taker.rawValue),
            ],
            subject: "")
    }
}
