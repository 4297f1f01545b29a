import Foundation
import MatchingCore
import ServiceKit

/// What kind of snack a listing offers.
public enum ListingCategory: String, Codable, Sendable, CaseIterable {
    case sweet, salty, drink, healthy, other
}

/// Where a listing's snack is: a point, and the place it was given as when it was given as one.
public struct ListingPlace: Codable, Sendable, Equatable {
    public var lat: Double
    public var lon: Double
    public var placeId: UUID?
    public var name: String?
}

/// A listing's owner as browsers see them: never an email; their rating from the exchanges they made.
public struct ListingOwner: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var photoId: UUID?
    /// The average of the stars others gave them, nil before their first review.
    public var rating: Double?
    public var reviews: Int
}

/// A snack offered for a swap.
public struct Listing: Codable, Sendable, Equatable {
    public var id: UUID
    public var owner: ListingOwner
    public var offered: String
    public var wanted: [String]
    public var category: ListingCategory
    public var place: ListingPlace
    public var photoId: UUID?
    public var note: String?
    public var status: ListingStatus
    /// The exchange under way or made, for its two parties only.
    public var exchangeId: UUID?
    /// From the `near` point of a browse.
    public var distanceMeters: Double?
    public var createdAt: Date
    public var updatedAt: Date
}

/// A page of listings; `next` is the `after` of the following page.
public struct ListingPage: Codable, Sendable, Equatable {
    public var listings: [Listing]
    public var next: String?
}

/// One side of an exchange.
public struct ExchangeParty: Codable, Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var completed: Bool
    public var reviewed: Bool
}

/// Two students swapping: the listing's owner and the one who agreed to it (the taker).
public struct Exchange: Codable, Sendable, Equatable {
    public var id: UUID
    public var listingId: UUID
    public var offered: String
    public var offering: String?
    public var status: ExchangeStatus
    public var owner: ExchangeParty
    public var taker: ExchangeParty
    public var createdAt: Date
}

/// What one party said of the other after their exchange.
public struct ExchangeReview: Codable, Sendable, Equatable {
    public var exchangeId: UUID
    public var reviewerId: UUID
    public var revieweeId: UUID
    public var stars: Int
    public var text: String?
    public var createdAt: Date
}

/// A listing's content, validated: what creating writes and what an edit leaves after it.
public struct ListingDraft: Sendable, Equatable {
    public var offered: String
    public var wanted: [String]
    public var category: ListingCategory
    public var place: PlaceChoice
    public var photoId: UUID?
    public var note: String?

    public init(
        offered: String, wanted: [String], category: ListingCategory, place: PlaceChoice, photoId: UUID?, note: String?
    ) {
        self.offered = offered
        self.wanted = wanted
        self.category = category
        self.place = place
        self.photoId = photoId
        self.note = note
    }
}

/// How a browse orders its listings, which decides what its cursor holds.
public enum ListingOrder: String, Sendable {
    /// Newest first.
    case newest = "n"
    /// Nearest to the `near` point first.
    case nearest = "d"
}

/// What a browse asks for, validated.
public struct ListingQuery: Sendable, Equatable {
    public var text: String?
    public var category: ListingCategory?
    public var near: GeoPoint?
    public var radiusMeters: Double
    public var isMine: Bool
    public var after: ListingCursor?
    public var limit: Int

    public init(
        text: String? = nil, category: ListingCategory? = nil, near: GeoPoint? = nil,
        radiusMeters: Double = ExchangeRules.defaultRadius, isMine: Bool = false, after: ListingCursor? = nil,
        limit: Int = 20
    ) {
        self.text = text
        self.category = category
        self.near = near
        self.radiusMeters = radiusMeters
        self.isMine = isMine
        self.after = after
        self.limit = limit
    }

    /// Nearest first near a point, else newest (with a text too: every listing it matches, matches well enough).
    public var order: ListingOrder {
        near != nil ? .nearest : .newest
    }
}

/// Where a page of listings starts: after the listing with these sort keys. Clients see it as an opaque text.
public struct ListingCursor: Sendable, Equatable {
    var order: ListingOrder
    /// The distance in meters (nearest); unused (newest).
    var rank: Double
    var createdAtMicroseconds: Int64
    var id: UUID

    init(order: ListingOrder, rank: Double = 0, createdAtMicroseconds: Int64, id: UUID) {
        self.order = order
        self.rank = rank
        self.createdAtMicroseconds = createdAtMicroseconds
        self.id = id
    }

    /// Reads `after`; 400 when it is not one this service wrote.
    init(_ raw: String) throws {
        let fields = try PageCursor.fields(raw, count: 4)
        guard let order = ListingOrder(rawValue: fields[0]), let rank = Double(fields[1]), rank.isFinite,
            let micros = Int64(fields[2]), let id = UUID(uuidString: fields[3])
        else { throw PageCursor.invalid }
        self.init(order: order, rank: rank, createdAtMicroseconds: micros, id: id)
    }

    /// `order|rank|micros|id`, as `PageCursor` writes it.
    var text: String {
        PageCursor.text(["\(order.rawValue)", "\(rank)", "\(createdAtMicroseconds)", id.uuidString.lowercased()])
    }
}

/// The rules of what a listing, a browse and a review may hold, without I/O.
public enum ExchangeRules {
    public static let maxOffered = 200
    public static let maxWanted = 10
    public static let maxWantedItem = 60
    public static let maxNote = 500
    public static let maxOffering = 200
    public static let maxReview = 1000
    public static let maxQuery = 100
    public static let defaultRadius = 2000.0
    public static let maxRadius = 50_000.0

    /// What is offered: 1 to 200 characters on one line.
    static func offered(_ raw: String) throws -> String {
        let text = try line(raw, field: "offered", limit: maxOffered)
        guard !text.isEmpty else { throw MatchingError.invalid(field: "offered", "offered says what you offer.") }
        return text
    }

    /// 0 to 10 short items, each on one line, without repeats (compared ignoring case), in the order given.
    static func wanted(_ raw: [String]?) throws -> [String] {
        var items: [String] = []
        for entry in raw ?? [] {
            let item = try line(entry, field: "wanted", limit: maxWantedItem)
            guard !item.isEmpty else { throw MatchingError.invalid(field: "wanted", "A wanted item cannot be empty.") }
            if !items.contains(where: { $0.caseInsensitiveCompare(item) == .orderedSame }) { items.append(item) }
        }
        guard items.count <= maxWanted else {
            throw MatchingError.invalid(field: "wanted", "A listing wants at most \(maxWanted) items.")
        }
        return items
    }

    /// One of the categories, by name.
    static func category(_ raw: String, field: String = "category") throws -> ListingCategory {
        guard let category = ListingCategory(rawValue: raw) else {
            let names = ListingCategory.allCases.map(\.rawValue).joined(separator: ", ")
            throw MatchingError.invalid(field: field, "\(field) is one of \(names).")
        }
        return category
    }

    /// A point or a place id, exactly one of them.
    static func place(lat: Double?, lon: Double?, placeId: UUID?) throws -> PlaceChoice {
        try PlaceChoice.validated(lat: lat, lon: lon, placeId: placeId, field: "place")
    }

    /// 1 to 5 whole stars.
    static func stars(_ stars: Int) throws -> Int {
        guard (1...5).contains(stars) else { throw MatchingError.invalid(field: "stars", "stars is from 1 to 5.") }
        return stars
    }

    /// Optional free text of at most `limit` characters (line breaks allowed); nil when blank.
    static func text(_ raw: String?, field: String, limit: Int) throws -> String? {
        let text = (raw ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard (raw ?? "").unicodeScalars.count <= limit else {
            throw MatchingError.invalid(field: field, "\(field) can have at most \(limit) characters.")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" }) else {
            throw MatchingError.invalid(field: field, "\(field) cannot contain control characters.")
        }
        return text.isEmpty ? nil : text
    }

    /// Trimmed text of at most `limit` characters on one line.
    static func line(_ raw: String, field: String, limit: Int) throws -> String {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard raw.unicodeScalars.count <= limit else {
            throw MatchingError.invalid(field: field, "\(field) can have at most \(limit) characters.")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw MatchingError.invalid(field: field, "\(field) is one line without control characters.")
        }
        return text
    }

    /// The subject of an exchange's chat: "Fazer Sininen for Karl Fazer bars" with what the taker brings, else what the
    /// listing wants, else what it offers alone.
    static func subject(offered: String, offering: String?, wanted: [String]) -> String {
        if let offering, !offering.isEmpty { return "\(offered) for \(offering)" }
        if !wanted.isEmpty { return "\(offered) for \(wanted.prefix(2).joined(separator: " or "))" }
        return offered
    }
}

/// What a `PATCH` changes of a listing, validated; what it leaves out stays as it was.
public struct ListingEdit: Sendable, Equatable {
    public var offered: String?
    public var wanted: [String]?
    public var category: ListingCategory?
    public var place: PlaceChoice?
    public var photoId: UUID?
    /// A new note; an empty one removes the note.
    public var note: String?

    public init(
        offered: String? = nil, wanted: [String]? = nil, category: ListingCategory? = nil, place: PlaceChoice? = nil,
        photoId: UUID? = nil, note: String? = nil
    ) {
        self.offered = offered
        self.wanted = wanted
        self.category = category
        self.place = place
        self.photoId = photoId
        self.note = note
    }

    /// `draft` with this edit's changes.
    public func applied(to draft: ListingDraft) -> ListingDraft {
        var edited = draft
        if let offered { edited.offered = offered }
        if let wanted { edited.wanted = wanted }
        if let category { edited.category = category }
        if let place { edited.place = place }
        if let photoId { edited.photoId = photoId }
        if let note { edited.note = note.isEmpty ? nil : note }
        return edited
    }
}
