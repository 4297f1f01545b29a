import Foundation
import HTTPTypes
import Logging
import OpenAPIRuntime
import OpenAPIURLSession
@_exported import TarrareAPI

/// The whole system through its gateway, as an app uses it: `api` makes every call of the API, typed, signed with the
/// session's token; the methods here are the ones that need more than one call or keep something (the session, the
/// feed). Every call either returns what it asked for or throws `TarrareError` (wrapped in OpenAPIRuntime's
/// `ClientError` when made through `api`; `TarrareClient.problem(of:)` finds it).
///
///     let tarrare = TarrareClient(serverURL: URL(string: "https://tarrare.example.org")!)
///     try await tarrare.logIn(email: "aino@helsinki.fi", password: "correct horse battery")
///     for try await event in tarrare.feed() {
///         if case .entry(let entry) = event { print(entry.type) }
///     }
public final class TarrareClient: Sendable {
    /// Every call of the API, typed (generated from the services' OpenAPI descriptions).
    public let api: Client
    public let session: Session
    let serverURL: URL
    let retry: RetryPolicy
    let logger: Logger

    /// - Parameters:
    ///   - serverURL: the gateway's address, without /v1.
    ///   - tokens: where the session is kept between launches.
    ///   - transport: how requests go out: URLSession's by default (an AsyncHTTPClient transport on a server).
    public init(
        serverURL: URL, tokens: any TokenStore = MemoryTokenStore(),
        transport: any ClientTransport = URLSessionTransport(), retry: RetryPolicy = RetryPolicy(),
        logger: Logger = Logger(label: "tarrare")
    ) {
        self.serverURL = serverURL
        self.retry = retry
        self.logger = logger
        let configuration = Configuration(dateTranscoder: ISO8601Times())
        let unsigned = Client(
            serverURL: serverURL, configuration: configuration, transport: transport,
            middlewares: [ProblemMiddleware(), RetryMiddleware(policy: retry)])
        let session = Session(store: tokens) { refreshToken in
            do {
                let answer = try await unsigned.postAuthRefresh(body: .json(.init(refreshToken: refreshToken)))
                return try Self.tokens(of: answer.ok.body.json)
            } catch let error where Self.problem(of: error).map({ [400, 401].contains($0.status) }) == true {
                return nil
            }
        }
        self.session = session
        api = Client(
            serverURL: serverURL, configuration: configuration, transport: transport,
            middlewares: [
                ProblemMiddleware(), IdempotencyKeyMiddleware(), RetryMiddleware(policy: retry),
                AuthenticationMiddleware(session: session),
            ])
    }

    // MARK: The session

    public enum SignUp: Sendable, Equatable {
        case signedIn(Components.Schemas.User)
        /// The campus asks for the address to be proved: `verify(email:code:)` with the code mailed to it.
        case verificationRequired
    }

    /// Makes an account; signed in at once unless the campus asks for the address to be proved first.
    @discardableResult
    public func signUp(email: String, password: String, name: String) async throws -> SignUp {
        let answer = try await call {
            try await api.postAuthSignup(body: .json(.init(email: email, password: password, name: name))).created.body
                .json
        }
        guard answer.verificationRequired != true, let tokens = Self.tokens(of: answer) else {
            return .verificationRequired
        }
        try await session.signIn(tokens)
        return .signedIn(answer.user)
    }

    /// Proves the address with the code mailed to it; `logIn` afterwards.
    public func verify(email: String, code: String) async throws {
        _ = try await call { try await api.postAuthVerify(body: .json(.init(email: email, code: code))).ok }
    }

    @discardableResult
    public func logIn(email: String, password: String) async throws -> Components.Schemas.User {
        let answer = try await call {
            try await api.postAuthLogin(body: .json(.init(email: email, password: password))).ok.body.json
        }
        guard let tokens = Self.tokens(of: answer) else { throw TarrareError.unexpected(status: 200) }
        try await session.signIn(tokens)
        return answer.user
    }

    /// Ends the session here and on the server (its refresh token stops working).
    public func signOut() async throws {
        if let tokens = try await session.current() {
            _ = try? await api.postAuthLogout(body: .json(.init(refreshToken: tokens.refreshToken)))
        }
        try await session.signOut()
    }

    // MARK: Chats, media, devices

    /// Sends a message; `id` makes it idempotent (a retry with the same id is the same message), so keep it until the
    /// send succeeds.
    @discardableResult
    public func send(_ text: String, to conversationId: String, id: UUID = UUID()) async throws
        -> Components.Schemas.Message
    {
        let answer = try await call {
            try await api.postConversationsByIdMessages(
                path: .init(id: conversationId), body: .json(.init(id: id.uuidString.lowercased(), text: text)))
        }
        switch answer {
        case .created(let created): return try created.body.json
        case .ok(let again): return try again.body.json  // NB: sent before, with this id.
        default: throw TarrareError.unexpected(status: 0)
        }
    }

    public enum ImageType: Sendable { case jpeg, png, webp }

    /// Uploads a photo (the server strips its metadata and keeps it upright); a retry answers with the first upload.
    public func upload(image: Data, type: ImageType, idempotencyKey: String = UUID().uuidString) async throws
        -> Components.Schemas.Image
    {
        let body = HTTPBody(image)
        let input: Operations.PostMedia.Input.Body =
            switch type {
            case .jpeg: .jpeg(body)
            case .png: .png(body)
            case .webp: .imageWebp(body)
            }
        let answer = try await call {
            try await api.postMedia(headers: .init(idempotencyKey: idempotencyKey), body: input)
        }
        switch answer {
        case .created(let created): return try created.body.json
        case .ok(let again): return try again.body.json
        default: throw TarrareError.unexpected(status: 0)
        }
    }

    public enum PushService: Sendable { case apns, fcm }

    /// Registers this device for pushes of what concerns the student while the app is closed: the token APNs or
    /// Firebase gave the app. Registering it again is harmless; `api.deleteDevicesById` ends it (at sign-out).
    @discardableResult
    public func registerDevice(_ service: PushService, token: String) async throws -> String {
        try await call {
            try await api.postDevices(body: .json(.init(platform: service == .apns ? .apns : .fcm, token: token)))
                .created.body.json.id
        }
    }

    // MARK: The feed

    /// The student's feed from after `after` (0: from the start; the last seq the app kept, to resume).
    public func feed(after: Int64 = 0) -> Feed {
        var socket = URLComponents(url: serverURL, resolvingAgainstBaseURL: false)!
        socket.scheme = socket.scheme == "https" ? "wss" : "ws"
        socket.path = socket.path.hasSuffix("/") ? socket.path + "v1/stream" : socket.path + "/v1/stream"
        return Feed(streamURL: socket.string!, session: session, after: after, retry: retry, logger: logger)
    }

    // MARK: Errors

    /// Runs calls of `api`, throwing what went wrong as `TarrareError` rather than inside a `ClientError`.
    public func call<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ClientError {
            if let reason = error.underlyingError as? TarrareError { throw reason }
            throw error
        }
    }

    /// The server's problem behind an error of a call, if that is what it was.
    public static func problem(of error: any Error) -> Problem? {
        switch error {
        case TarrareError.problem(let problem): problem
        case let error as ClientError: problem(of: error.underlyingError)
        default: nil
        }
    }

    static func tokens(of session: Components.Schemas.Session) -> Tokens? {
        guard let access = session.accessToken, let refresh = session.refreshToken else { return nil }
        return Tokens(accessToken: access, refreshToken: refresh, userId: session.user.id)
    }
}

/// The server's times: ISO 8601, with fractions of a second (or without, from an older server).
struct ISO8601Times: DateTranscoder {
    func encode(_ date: Date) throws -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    func decode(_ text: String) throws -> Date {
        guard let date = Feed.date(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not an ISO 8601 time: \(text)"))
        }
        return date
    }
}
