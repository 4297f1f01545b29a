import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Every create and send carries an `Idempotency-Key`, the same on each retry of it, so that a retry after a lost
/// answer is not a second order or a second message. A caller's own key is kept.
struct IdempotencyKeyMiddleware: ClientMiddleware {
    static let field = HTTPField.Name("Idempotency-Key")!

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if request.method == .post, request.headerFields[Self.field] == nil {
            request.headerFields[Self.field] = UUID().uuidString.lowercased()
        }
        return try await next(request, body, baseURL)
    }
}

/// How calls are tried again: a 503 (the service could not do it now, and did nothing) after its `Retry-After`, or
/// after a backoff that doubles from `firstDelay`, with jitter; a failure to reach the gateway the same way when the
/// call can be repeated safely (a read, a put or a delete). Other answers go to the caller.
public struct RetryPolicy: Sendable {
    public var attempts: Int
    public var firstDelay: Duration
    /// The longest wait between two attempts, whatever `Retry-After` says.
    public var longestDelay: Duration

    public init(attempts: Int = 4, firstDelay: Duration = .milliseconds(200), longestDelay: Duration = .seconds(30)) {
        self.attempts = max(1, attempts)
        self.firstDelay = firstDelay
        self.longestDelay = longestDelay
    }

    public static let none = RetryPolicy(attempts: 1)

    /// The wait before attempt `attempt + 1`: `Retry-After` when the answer gave one, else the backoff.
    func delay(after attempt: Int, retryAfter: String?) -> Duration {
        if let retryAfter, let seconds = Self.seconds(retryAfter: retryAfter) {
            return min(.milliseconds(Int(seconds * 1000)), longestDelay)
        }
        let backoff = firstDelay * (1 << min(attempt - 1, 16))
        return min(backoff * Double.random(in: 0.5...1.5), longestDelay)
    }

    /// `Retry-After` as seconds from now: a number of seconds, or an HTTP date.
    static func seconds(retryAfter value: String, now: Date = Date()) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed) { return max(0, seconds) }
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = TimeZone(identifier: "GMT")
        format.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return format.date(from: trimmed).map { max(0, $0.timeIntervalSince(now)) }
    }
}

struct RetryMiddleware: ClientMiddleware {
    let policy: RetryPolicy
    var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        // NB: a body that can be read once only (a stream) is sent once.
        let repeatable = body.canBeSentAgain
        // NB: a create whose answer was lost may have been made: only media keeps the first by its key (messages,
        // orders and runs by the id the app gives them), so a POST is tried again after a 503 alone.
        let safe = [.get, .head, .put, .delete, .options].contains(request.method)
        var attempt = 1
        while true {
            let answer: (HTTPResponse, HTTPBody?)
            do {
                answer = try await next(request, body, baseURL)
            } catch {
                // NB: the inner middlewares' errors come wrapped; what the session said (signed out) is not the
                // network's failure.
                let cause = (error as? ClientError)?.underlyingError ?? error
                guard safe, repeatable, attempt < policy.attempts, !(cause is CancellationError),
                    !(cause is TarrareError)
                else { throw error }
                try await sleep(policy.delay(after: attempt, retryAfter: nil))
                attempt += 1
                continue
            }
            guard answer.0.status.code == 503, repeatable, attempt < policy.attempts else { return answer }
            try await sleep(policy.delay(after: attempt, retryAfter: answer.0.headerFields[.retryAfter]))
            attempt += 1
        }
    }
}

/// The signed-in student's access token on every call, renewed before it expires; a call the server answers 401 is
/// sent once more with a renewed token (one renewal for all the calls that found it stale).
struct AuthenticationMiddleware: ClientMiddleware {
    let session: Session

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard request.headerFields[.authorization] == nil, let token = try await session.accessToken() else {
            return try await next(request, body, baseURL)
        }
        var signed = request
        signed.headerFields[.authorization] = "Bearer \(token)"
        let answer = try await next(signed, body, baseURL)
        guard answer.0.status == .unauthorized, body.canBeSentAgain else {
            return answer
        }
        guard let renewed = try await session.renewed(replacing: token) else { throw TarrareError.signedOut }
        signed.headerFields[.authorization] = "Bearer \(renewed)"
        return try await next(signed, body, baseURL)
    }
}

/// An answer of 400 or above is thrown as `TarrareError.problem` with the server's problem, so that every call
/// either returns what it asked for or throws what the server said.
struct ProblemMiddleware: ClientMiddleware {
    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, answer) = try await next(request, body, baseURL)
        guard response.status.code >= 400 else { return (response, answer) }
        var data = Data()
        if let answer { data = try await Data(collecting: answer, upTo: 1 << 16) }
        let problem =
            (try? JSONDecoder().decode(Problem.self, from: data))
            ?? Problem(title: response.status.reasonPhrase, status: response.status.code)
        throw TarrareError.problem(problem)
    }
}

extension Optional where Wrapped == HTTPBody {
    /// Whether a request with this body can be sent again: no body, or one that can be read more than once.
    var canBeSentAgain: Bool { map { $0.iterationBehavior == .multiple } ?? true }
}
