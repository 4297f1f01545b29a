import Foundation
import MatchingCore
import ServiceKit

/// Which side of tutoring a user is on.
public enum TutoringRole: String, Codable, Sendable, CaseIterable {
    case student, tutor

    /// The side whose cards this side sees.
    public var opposite: TutoringRole { self == .student ? .tutor : .student }
}

/// A user's tutoring profile, as its owner and those matched with them read it.
public struct TutoringProfile: Codable, Sendable, Equatable {
    public var userId: UUID
    public var name: String
    public var photoId: UUID?
    public var bio: String?
    public var role: TutoringRole
    public var courses: [String]
    public var description: String
    public var rateCents: Int
    public var availability: String
    public var preferences: String
    public var updatedAt: Date
}

/// What a profile holds, validated.
public struct TutoringProfileInput: Sendable {
    public var role: TutoringRole
    public var courses: [String]
    public var description: String
    public var rateCents: Int
    public var availability: String
    public var preferences: String

    public init(
        role: TutoringRole, courses: [String], description: String, rateCents: Int, availability: String,
        preferences: String
    ) {
        self.role = role
        self.courses = courses
        self.description = description
        self.rateCents = rateCents
        self.availability = availability
        self.preferences = preferences
    }
}

/// A course on a card: whether the caller shares it.
public struct CardCourse: Codable, Sendable, Equatable {
    public var code: String
    public var shared: Bool
}

/// Another user as the feed shows them: never an email, never their preferences.
public struct TutoringCard: Codable, Sendable, Equatable {
    public var userId: UUID
    public var name: String
    public var photoId: UUID?
    public var role: TutoringRole
    public var description: String
    public var courses: [CardCourse]
    public var rateCents: Int
    public var availability: String
}

/// A page of the feed; `next` is the `after` of the following page.
public struct TutoringFeed: Codable, Sendable, Equatable {
    public var cards: [TutoringCard]
    public var next: String?
}

/// What a swipe did.
public struct SwipeResult: Codable, Sendable, Equatable {
    public var matched: Bool
    public var matchId: UUID?
}

/// An active match, as one of its members sees it.
public struct TutoringMatch: Codable, Sendable, Equatable {
    public var id: UUID
    public var userId: UUID
    public var name: String
    public var photoId: UUID?
    public var role: TutoringRole
    public var courses: [String]
    public var createdAt: Date
}

/// The rules of what a profile may hold, without I/O.
public enum TutoringRules {
    public static let maxCourses = 20

    /// A course code in one spelling: letters and digits only, upper case, a hyphen between the leading letters
    /// and what follows (`mat101`, `MAT 101` and `mat-101` are all `MAT-101`); nil when it is not a course code.
    public static func normalizedCourse(_ raw: String) -> String? {
        let kept = raw.uppercased().unicodeScalars.filter { !" -_./".unicodeScalars.contains($0) }
        guard (2...16).contains(kept.count),
            kept.allSatisfy({ ("A"..."Z").contains($0) || ("0"..."9").contains($0) })
        else { return nil }
        let text = String(String.UnicodeScalarView(kept))
        guard let firstDigit = text.firstIndex(where: \.isNumber), firstDigit != text.startIndex else { return text }
        return text[..<firstDigit] + "-" + text[firstDigit...]
    }

    /// 1 to 20 distinct course codes, normalised, in the order given.
    static func courses(_ raw: [String]) throws -> [String] {
        var courses: [String] = []
        for code in raw {
            guard let course = normalizedCourse(code) else {
                throw MatchingError.invalid(
                    field: "courses", "\"\(code.prefix(40))\" is not a course code; write it like MAT-101.")
            }
            if !courses.contains(course) { courses.append(course) }
        }
        guard (1...maxCourses).contains(courses.count) else {
            throw MatchingError.invalid(field: "courses", "A profile has 1 to \(maxCourses) courses.")
        }
        return courses
    }

    /// Trimmed text of at most `limit` characters without control characters (line breaks allowed).
    static func text(_ raw: String?, field: String, limit: Int) throws -> String {
        let text = (raw ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard (raw ?? "").unicodeScalars.count <= limit else {
            throw MatchingError.invalid(field: field, "\(field) can have at most \(limit) characters.")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" }) else {
            throw MatchingError.invalid(field: field, "\(field) cannot contain control characters.")
        }
        return text
    }

    /// A rate per hour in cents, from 0 to 100,000 (a thousand euros).
    static func rate(_ cents: Int) throws -> Int {
        guard (0...100_000).contains(cents) else {
            throw MatchingError.invalid(field: "rateCents", "rateCents is a rate per hour in cents, from 0 to 100000.")
        }
        return cents
    }

    /// The subject of a match's chat: "MAT-101 tutoring", or with more shared courses "MAT-101, PHYS-102 tutoring".
    static func subject(courses: [String]) -> String {
        (courses.isEmpty ? "" : courses.prefix(3).joined(separator: ", ") + " ") + "tutoring"
    }
}

/// Where a feed page starts: after the card with these ranks.
public struct FeedCursor: Sendable, Equatable {
    var shared: Int
    var activeAtMicroseconds: Int64
    var userId: UUID

    init(shared: Int, activeAtMicroseconds: Int64, userId: UUID) {
        self.shared = shared
        self.activeAtMicroseconds = activeAtMicroseconds
        self.userId = userId
    }

    /// Reads `after`; 400 when it is not one this service wrote.
    init(_ raw: String) throws {
        let fields = try PageCursor.fields(raw, count: 3)
        guard let shared = Int(fields[0]), let micros = Int64(fields[1]), let userId = UUID(uuidString: fields[2])
        else { throw PageCursor.invalid }
        self.init(shared: shared, activeAtMicroseconds: micros, userId: userId)
    }

    /// `shared|microseconds|userId`, as `PageCursor` writes it.
    var text: String { PageCursor.text(["\(shared)", "\(activeAtMicroseconds)", userId.uuidString.lowercased()]) }
}
