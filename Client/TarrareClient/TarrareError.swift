import Foundation

/// What went wrong with a call, as an app shows it.
public enum TarrareError: Error, Sendable, Equatable {
    /// No student is signed in, or the server refused the refresh token (signed out elsewhere, or too long away).
    case signedOut
    /// The server's answer: an RFC 9457 problem, with the status it came with.
    case problem(Problem)
    /// An answer the API does not describe.
    case unexpected(status: Int)
    /// The feed skipped entries: never expected, since the server fills gaps; the feed reconnects after `after`.
    case feedGap(after: Int64, got: Int64)
}

/// An RFC 9457 problem: `title` says what happened, `detail` what to do; `field` names the input at fault.
public struct Problem: Sendable, Equatable, Codable {
    public var type: String?
    public var title: String
    public var status: Int
    public var detail: String?
    public var field: String?

    public init(type: String? = nil, title: String, status: Int, detail: String? = nil, field: String? = nil) {
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.field = field
    }
}
