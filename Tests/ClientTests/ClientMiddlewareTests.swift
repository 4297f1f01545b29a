import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

@testable import TarrareClient

/// The package's handling of answers, against a transport of the test's own: retries after a 503 and its
/// `Retry-After`, the same idempotency key on each retry of a create, problems thrown as `TarrareError`.
struct ClientMiddlewareTests {
    /// Answers each request with the next of `answers`, keeping what it was sent.
    final class Transport: ClientTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var answers: [(HTTPResponse, String)]
        private(set) var requests: [HTTPRequest] = []

        init(_ answers: [(HTTPResponse, String)]) { self.answers = answers }

        func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (
            HTTPResponse, HTTPBody?
        ) {
            let (response, text) = lock.withLock {
                requests.append(request)
                return answers.removeFirst()
            }
            return (response, HTTPBody(text))
        }

        var sent: [HTTPRequest] { lock.withLock { requests } }
    }

    static func answer(_ status: Int, _ fields: HTTPFields = [:], json: String) -> (HTTPResponse, String) {
        var fields = fields
        fields[.contentType] = status >= 400 ? "application/problem+json" : "application/json"
        return (HTTPResponse(status: .init(code: status), headerFields: fields), json)
    }

    static let busy = answer(
        503, [.retryAfter: "0"], json: #"{"type":"about:blank","title":"Busy","status":503}"#)
    static let campuses = answer(
        200,
        json: #"""
            {"campuses":[{"bounds":{"maxLatitude":60.179,"maxLongitude":24.953,"minLatitude":60.164,"minLongitude":24.935},
            "center":{"latitude":60.1712,"longitude":24.9497},"domain":"helsinki.fi","dropoffRadiusMeters":30000,
            "marginMeters":2000,"name":"University of Helsinki, City Centre Campus"}]}
            """#)

    @Test func a503IsTriedAgainAfterItsRetryAfterAndACreateKeepsItsIdempotencyKey() async throws {
        let transport = Transport([
            Self.busy, Self.busy,
            Self.answer(201, json: #"{"id":"b1","userId":"u","name":"N","createdAt":"2026-11-27T10:00:00.123Z"}"#),
        ])
        let client = TarrareClient(serverURL: URL(string: "http://gateway")!, transport: transport)
        _ = try await client.call { try await client.api.postBlocks(body: .json(.init(userId: "u"))) }
        let keys = transport.sent.map { $0.headerFields[IdempotencyKeyMiddleware.field] }
        #expect(keys.count == 3 && keys[0] != nil && Set(keys).count == 1, "\(keys)")
    }

    @Test func aReadCarriesNoIdempotencyKeyAndAProblemIsThrownAsIs() async throws {
        let transport = Transport([
            Self.campuses, Self.answer(409, json: #"{"type":"about:blank","title":"Taken","status":409,"field":"x"}"#),
        ])
        let client = TarrareClient(serverURL: URL(string: "http://gateway")!, transport: transport)
        let campuses = try await client.call { try await client.api.getCampuses().ok.body.json.campuses }
        #expect(campuses.map(\.domain) == ["helsinki.fi"])
        #expect(transport.sent[0].headerFields[IdempotencyKeyMiddleware.field] == nil)
        await #expect(
            throws: TarrareError.problem(Problem(type: "about:blank", title: "Taken", status: 409, field: "x"))
        ) {
            try await client.call { try await client.api.getCampuses() }
        }
    }

    @Test func theWaitIsRetryAfterInSecondsOrAsADateElseABackoffAndNeverLongerThanTheLongest() async throws {
        let waits = Waits()
        let retry = RetryMiddleware(policy: RetryPolicy(attempts: 4, longestDelay: .seconds(60))) {
            await waits.add($0)
        }
        let date = Date().addingTimeInterval(120).formatted(
            .verbatim(
                "\(weekday: .abbreviated), \(day: .twoDigits) \(month: .abbreviated) \(year: .defaultDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) GMT",
                locale: Locale(identifier: "en_US_POSIX"), timeZone: TimeZone(identifier: "GMT")!,
                calendar: Calendar(identifier: .gregorian)))
        let answers = Answers([
            HTTPResponse(status: .serviceUnavailable, headerFields: [.retryAfter: "7"]),
            HTTPResponse(status: .serviceUnavailable, headerFields: [.retryAfter: date]),
            HTTPResponse(status: .serviceUnavailable),
            HTTPResponse(status: .serviceUnavailable),
        ])
        let (last, _) = try await retry.intercept(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/campuses"), body: nil,
            baseURL: URL(string: "http://gateway")!, operationID: "getCampuses"
        ) { _, _, _ in (await answers.next(), nil) }
        // Four attempts in all: the last 503 goes to the caller.
        #expect(last.status == .serviceUnavailable)
        let seen = await waits.all
        #expect(seen.count == 3)
        #expect(seen[0] == .seconds(7))
        #expect(seen[1] == .seconds(60), "a date two minutes away waits the longest allowed")
        #expect(seen[2] > .zero && seen[2] <= .seconds(60))
    }

    actor Waits {
        var all: [Duration] = []
        func add(_ wait: Duration) { all.append(wait) }
    }

    actor Answers {
        var left: [HTTPResponse]
        init(_ answers: [HTTPResponse]) { left = answers }
        func next() -> HTTPResponse { left.removeFirst() }
    }
}
