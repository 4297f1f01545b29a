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
    var isEmailVerified: Bool
    var version: Int64
    var createdAt: Date

    enum CodingKeys: String, CodingKey {
        case id, email, name, campus, mode, createdAt
        case isEmailVerified = "emailVerified"
    }
}

/// The rules for what a student may sign up with, without I/O.
enum AccountRules {
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
        guard password.count >= 8 else {
            throw .invalid(field: "password", "The password needs at least 8 characters.")
        }
        guard password.count <= 128 else {
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

    /// A display name of 1 to 80 characters, trimmed, without control characters.
    static func normalizedName(_ raw: String) throws(AccountError) -> String {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw .invalid(field: "name", "The name cannot be empty.") }
        guard name.count <= 80 else { throw .invalid(field: "name", "The name can have at most 80 characters.") }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalid(field: "name", "The name cannot contain control characters.")
        }
        return name
    }
}
