import AsyncHTTPClient
import Contracts
import Foundation
import NIOCore
import NIOHTTP1

/// The system as a client sees it: HTTP/JSON through the gateway. Every call is timed under its operation
/// name, and every failure counted by operation and status.
struct Gateway: Sendable {
    let baseURL: String
    let http: HTTPClient
    let measurements: Measurements

    /// An answer: its status and its JSON object (empty when the body was not one).
    struct Answer: @unchecked Sendable {
        var status: UInt
        var json: [String: Any]
        /// The seconds a busy service asked to wait (`Retry-After` of a 503 or 429).
        var retryAfter: Double? = nil

        var isSuccess: Bool { (200..<300).contains(status) }
    }

    init(baseURL: String, measurements: Measurements, connections: Int) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.measurements = measurements
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: connections)
        configuration.timeout = .init(connect: .seconds(5), read: .seconds(30))
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// The WebSocket URL of the caller's feed after `seq`.
    func streamURL(token: String, after seq: Int64) -> String {
        let socketBase = baseURL.replacingOccurrences(of: "http://", with: "ws://")
            .replacingOccurrences(of: "https://", with: "wss://")
        return "\(socketBase)/v1/stream?after=\(seq)&access_token=\(token)"
    }

    /// Sends one request and records it under `operation` (by default method and path without ids). Returns nil
    /// when no answer came (connection refused, timeout); a non-2xx answer is returned and counted as an error
    /// unless its status is in `expected`.
    @discardableResult
    func call(
        _ method: HTTPMethod, _ path: String, operation: String? = nil, token: String? = nil,
        body: [String: Any]? = nil,
        expected: Set<UInt> = []
    ) async -> Answer? {
        let json = body.flatMap { try? JSONSerialization.data(withJSONObject: $0) }.map { ByteBuffer(bytes: $0) }
        return await call(method, path, operation: operation, token: token, json: json, expected: expected)
    }

    /// The same with the body's JSON already written. With `readsAnswer` false the answer's body is not parsed
    /// (its `json` is empty): a caller that needs only the status spares the machine it measures that work.
    @discardableResult
    func call(
        _ method: HTTPMethod, _ path: String, operation: String? = nil, token: String? = nil, json: ByteBuffer?,
        readsAnswer: Bool = true, expected: Set<UInt> = []
    ) async -> Answer? {
        let operation = operation ?? "\(method.rawValue) \(path)"
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(json)
        }
        let start = Stopwatch.now()
        do {
            let response = try await http.execute(request, timeout: .seconds(30))
            let bytes = try await response.body.collect(upTo: 1 << 22)
            let elapsed = Stopwatch.now() - start
            let status = response.status.code
            let json =
                readsAnswer
                ? (try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView))) as? [String: Any] ?? [:]
                : [:]
            measurements.record(operation, seconds: elapsed)
            let retryAfter = response.headers.first(name: "Retry-After").flatMap(Double.init)
            if !(200..<300).contains(status) && !expected.contains(status) {
                measurements.recordError(
                    operation, retryAfter == nil ? String(status) : "\(status), refused with Retry-After")
            }
            return Answer(status: status, json: json, retryAfter: retryAfter)
        } catch {
            measurements.recordError(operation, Self.describe(error))
            return nil
        }
    }

    /// The same client, recording into `other`.
    func recording(into other: Measurements) -> Gateway {
        Gateway(baseURL: baseURL, http: http, measurements: other)
    }

    private init(baseURL: String, http: HTTPClient, measurements: Measurements) {
        self.baseURL = baseURL
        self.http = http
        self.measurements = measurements
    }

    func shutdown() async throws {
        try await http.shutdown()
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            if error == .deadlineExceeded || error == .readTimeout { return "timeout" }
            if error == .remoteConnectionClosed { return "connection closed" }
        }
        let text = String(describing: error)
        if text.contains("refused") { return "connection refused" }
        return String(text.prefix(60))
    }
}

extension [String: Any] {
    /// A string field, or a UUID string field lower-cased so that ids compare alike.
    func string(_ key: String) -> String? { self[key] as? String }
    func id(_ key: String) -> String? { (self[key] as? String)?.lowercased() }
    func object(_ key: String) -> [String: Any]? { self[key] as? [String: Any] }
    func objects(_ key: String) -> [[String: Any]] { self[key] as? [[String: Any]] ?? [] }
}

extension ByteBuffer {
    /// A JSON object of string fields, written byte by byte (`JSONObjectWriter`): `JSONSerialization`'s work without
    /// its cost, on the hot path of `load chat`.
    init(jsonStrings fields: KeyValuePairs<String, String>) {
        var object = JSONObjectWriter()
        for (key, value) in fields { object.add(key, value) }
        self.init(bytes: object.finished())
    }
}
