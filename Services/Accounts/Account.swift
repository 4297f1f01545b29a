import Crypto
import Foundation

/// What a student uses the app for right now.
enum Mode: String, Codable, Sendable, CaseIterable {
    case ordering
    case delivering
}

/// A student's account as the API shows it to its owner.
struct Account: Encodable, Sendable, Equatable {
    var id: UUID
    var email: String
    var name: String
    var campus: String
    var mode: Mode
    var bio: String
    var photoId: UUID?
    var isEmailVerified: Bool
    var version: Int64
    var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, email, name, campus, mode, bio, photoId, createdAt
        case isEmailVerified = "emailVerified"
    }
}

/// The rules for what a student may sign up with, without I/O.
enum AccountRules {
    /// The key under which failed logins to an email are counted: a digest, so that the throttle's table holds no
    /// address (one that was deleted, or one that never signed up).
    static func throttleKey(email: String) -> String {
        "email:" + SHA256.hash(data: Data(email.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// A trimmed, lower-cased address with one `@`, a plausible local part and a dotted domain.
    static func normalizedEmail(_ raw: String) throws(AccountError) -> (email: String, domain: String) {
        let email = raw.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard email.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64,
            parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."), !parts[1].contains(".."),
            email.allSatisfy({ !$0.isWhitespace && !$0.isNewline }),
            parts[1].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" })
        else { throw .invalid(field: "email", "Enter a valid email address.") }
        return (email, String(parts[1]))
    }

    /// 8 to 128 characters, at most 72 bytes (what bcrypt reads), and not one of the most common passwords.
    static func validatePassword(_ password: String) throws(AccountError) {
        guard password.unicodeScalars.count >= 8 else {
            throw .invalid(field: "password", "The password needs at least 8 characters.")
        }
        guard password.unicodeScalars.count <= 128 else {
            throw .invalid(field: "password", "The password can have at most 128 characters.")
        }
        guard password.utf8.count <= 72 else {
            throw .invalid(field: "password", "The password can be at most 72 bytes long in UTF-8.")
        }
        guard !password.utf8.contains(0) else {
            throw .invalid(field: "password", "The password cannot contain a NUL character.")
        }
        guard !CommonPasswords.contains(password) else {
            throw .invalid(field: "password", "This password is among the most common ones; choose another.")
        }
    }

    /// A display name of 1 to 80 characters, trimmed, without control or bidirectional formatting characters (which
    /// could make it read as another's name), and with at least one visible character.
    static func normalizedName(_ raw: String) throws(AccountError) -> String {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw .invalid(field: "name", "The name cannot be empty.") }
        guard raw.unicodeScalars.count <= 80 else {
            throw .invalid(field: "name", "The name can have at most 80 characters.")
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalid(field: "name", "The name cannot contain control characters.")
        }
        guard !name.unicodeScalars.contains(where: \.isBidiControl) else {
            throw .invalid(field: "name", "The name cannot contain characters that change the direction of text.")
        }
        guard name.unicodeScalars.contains(where: \.isVisible) else {
            throw .invalid(field: "name", "The name needs at least one visible character.")
        }
        return name
    }
}

extension AccountRules {
    /// A bio of at most 500 characters, trimmed; line breaks are kept, other control and bidirectional formatting
    /// characters are refused.
    static func normalizedBio(_ raw: String) throws(AccountError) -> String {
        let bio = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard raw.unicodeScalars.count <= 500 else {
            throw .invalid(field: "bio", "The bio can have at most 500 characters.")
        }
        guard !bio.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" }) else {
            throw .invalid(field: "bio", "The bio cannot contain control characters other than line breaks.")
        }
        guard !bio.unicodeScalars.contains(where: \.isBidiControl) else {
            throw .invalid(field: "bio", "The bio cannot contain characters that change the direction of text.")
        }
        return bio
    }
}

/// How many events of one key (a login failure, a sign-up) a throttle lets through within its window.
struct Throttle: Sendable {
    var limit: Int
    var window: TimeInterval

    /// nil when one more event may happen now, else the seconds until one may.
    func retryAfter(_ recent: ThrottleCount?) -> Int? {
        guard let recent, recent.events >= limit else { return nil }
        return max(1, recent.secondsLeft)
    }
}

/// A key's events within a throttle's window, and the seconds until the oldest of them leaves it.
struct ThrottleCount: Sendable, Equatable {
    var events: Int
    var secondsLeft: Int
}

extension Unicode.Scalar {
    /// The explicit directional marks, embeddings, overrides and isolates (U+061C, U+200E–F, U+202A–E, U+2066–9).
    var isBidiControl: Bool { properties.isBidiControl }

    /// A letter, mark, number, punctuation or symbol that draws something: not a space, a format character or one
    /// of the blank fillers that Unicode counts as letters or symbols.
    var isVisible: Bool {
        switch properties.generalCategory {
        case .spaceSeparator, .lineSeparator, .paragraphSeparator, .control, .format, .surrogate, .privateUse,
            .unassigned, .nonspacingMark, .enclosingMark:
            return false
        default:
            return !properties.isDefaultIgnorableCodePoint && !Self.blankFillers.contains(value)
        }
    }

    private static let blankFillers: Set<UInt32> = [0x115F, 0x1160, 0x2800, 0x3164, 0xFFA0]
}
