import Foundation

/// What a signed-in student holds: a short-lived access token, the refresh token that renews it, and who they are.
public struct Tokens: Codable, Sendable, Equatable {
    public var accessToken: String
    public var refreshToken: String
    public var userId: String

    public init(accessToken: String, refreshToken: String, userId: String) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.userId = userId
    }

    /// When the access token stops being accepted (its `exp`), when it says.
    var accessExpires: Date? {
        let parts = accessToken.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var payload = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        payload += String(repeating: "=", count: (4 - payload.count % 4) % 4)
        struct Claims: Decodable { var exp: Double? }
        guard let data = Data(base64Encoded: payload), let claims = try? JSONDecoder().decode(Claims.self, from: data),
            let exp = claims.exp
        else { return nil }
        return Date(timeIntervalSince1970: exp)
    }
}

/// Where the tokens are kept between launches: the Keychain on Apple platforms (`KeychainTokenStore`), a file or
/// memory elsewhere.
public protocol TokenStore: Sendable {
    func load() async throws -> Tokens?
    /// Keeps `tokens`, or forgets them when nil (signed out).
    func save(_ tokens: Tokens?) async throws
}

/// Tokens kept for the life of the process.
public actor MemoryTokenStore: TokenStore {
    private var tokens: Tokens?

    public init(_ tokens: Tokens? = nil) { self.tokens = tokens }

    public func load() -> Tokens? { tokens }
    public func save(_ tokens: Tokens?) { self.tokens = tokens }
}

/// Tokens kept in a file only its owner reads (0600), for a command-line tool or a server-side client.
public struct FileTokenStore: TokenStore {
    public let url: URL

    public init(url: URL) { self.url = url }

    public func load() throws -> Tokens? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try JSONDecoder().decode(Tokens.self, from: Data(contentsOf: url))
    }

    public func save(_ tokens: Tokens?) throws {
        guard let tokens else {
            if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
            return
        }
        let data = try JSONEncoder().encode(tokens)
        guard FileManager.default.createFile(atPath: url.path, contents: data, attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path]) }
    }
}

/// The signed-in student's tokens, renewed when they expire: however many calls find the access token expired at
/// once, one refresh goes out and they all wait for it; a refresh token the server refuses signs the student out.
public actor Session {
    /// Asks the server for new tokens with a refresh token: nil when it refuses it (signed out elsewhere, expired).
    typealias Refresh = @Sendable (String) async throws -> Tokens?

    private let store: any TokenStore
    private var tokens: Tokens?
    private var loaded = false
    private var refreshing: Task<Tokens?, any Error>?
    private let refresh: Refresh
    private var signedOutHandlers: [@Sendable () -> Void] = []

    init(store: any TokenStore, refresh: @escaping Refresh) {
        self.store = store
        self.refresh = refresh
    }

    /// Called when the server refuses the refresh token and the session ends by itself.
    public func onSignedOut(_ handler: @escaping @Sendable () -> Void) { signedOutHandlers.append(handler) }

    /// The tokens held, read from the store the first time.
    public func current() async throws -> Tokens? {
        if !loaded {
            tokens = try await store.load()
            loaded = true
        }
        return tokens
    }

    public var isSignedIn: Bool {
        get async { (try? await current()) != nil }
    }

    /// An access token to send: the one held, or a renewed one when it has expired (or will within `margin`).
    func accessToken(margin: TimeInterval = 10) async throws -> String? {
        guard let held = try await current() else { return nil }
        if let expires = held.accessExpires, expires.timeIntervalSinceNow < margin {
            return try await renewed(replacing: held.accessToken)
        }
        return held.accessToken
    }

    /// A token to use instead of `stale`, which the server refused: another call's renewal when one happened since,
    /// else one renewal shared by every caller. Nil when the student is signed out.
    func renewed(replacing stale: String) async throws -> String? {
        if let refreshing { return try await refreshing.value?.accessToken }
        guard let held = try await current() else { return nil }
        if held.accessToken != stale { return held.accessToken }
        let task = Task { try await refresh(held.refreshToken) }
        refreshing = task
        defer { refreshing = nil }
        guard let renewed = try await task.value else {
            try await signOut()
            for handler in signedOutHandlers { handler() }
            return nil
        }
        try await signIn(renewed)
        return renewed.accessToken
    }

    func signIn(_ tokens: Tokens) async throws {
        self.tokens = tokens
        loaded = true
        try await store.save(tokens)
    }

    func signOut() async throws {
        tokens = nil
        loaded = true
        try await store.save(nil)
    }
}
