import Foundation
import Hummingbird
import Logging
import NIOCore

/// The request context of every service: who is calling (once authenticated) and from where.
public struct ServiceRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The verified caller, set by `AuthenticationMiddleware`.
    public var identity: Identity?
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    public var requestDecoder: JSONDecoder { ServiceJSON.decoder }
    public var responseEncoder: JSONEncoder { ServiceJSON.encoder }

    /// The verified caller, or 401.
    public func requireIdentity() throws -> Identity {
        guard let identity else { throw Problem.unauthorized }
        return identity
    }
}

/// JSON as the API speaks it: camelCase keys, ISO 8601 times in UTC.
public enum ServiceJSON {
    public static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// How the API writes a time: ISO 8601 in UTC, with milliseconds.
    public static let timeStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    public static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(timeStyle))
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

extension Request {
    /// The client's address: the gateway's `X-Forwarded-For` when trusted, else the socket's peer.
    public func clientAddress(context: ServiceRequestContext, trustsForwardedFor: Bool) -> String {
        if trustsForwardedFor, let forwarded = headers[.init("X-Forwarded-For")!] {
            // NB: the gateway appends the peer it saw; earlier entries are whatever the client claimed.
            if let last = forwarded.split(separator: ",").last {
                return last.trimmingCharacters(in: .whitespaces)
            }
        }
        return context.remoteAddress?.ipAddress ?? "unknown"
    }

    /// Decodes the JSON body, turning every malformed or mistyped input into a 400 problem that names the field.
    /// `emptyAs`: what a request without a body stands for, when it may have none.
    public func decodeJSON<T: Decodable>(as type: T.Type, context: ServiceRequestContext, emptyAs empty: T? = nil)
        async throws -> T
    {
        // NB: Hummingbird's own decode turns decoding errors into a bare 400; this keeps the field that failed.
        let body = Data(try await self.body.collect(upTo: .max).readableBytesView)
        if let empty, body.allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
            return empty
        }
        let value: T
        do {
            value = try context.requestDecoder.decode(type, from: body)
        } catch let error as DecodingError {
            throw Problem(decoding: error)
        }
        // NB: the decoder reads `"field": null` as a missing optional; no field of the API takes null, so a client
        // that sends one hears which field instead of having it silently ignored. A string with U+0000 would be cut
        // short on its way to PostgreSQL (whose text cannot hold it), so it is refused too.
        if Self.contains(Self.nullBytes, in: body) || Self.contains(Self.nulCharacterBytes, in: body),
            let refused = Self.firstRefusedValue(in: try? JSONSerialization.jsonObject(with: body))
        {
            throw Problem.invalid(refused.field, "\(refused.field) \(refused.problem)")
        }
        return value
    }

    private static let nullBytes = Array("null".utf8)
    private static let nulCharacterBytes = Array(#"\u0000"#.utf8)

    /// Whether `needle` (not empty) occurs in `body`. NB: a loop over the bytes, not the standard library's generic
    /// search of a collection in another, which took a fourteenth of chat's CPU time when every message's body was
    /// searched with it.
    private static func contains(_ needle: [UInt8], in body: Data) -> Bool {
        body.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            guard bytes.count >= needle.count else { return false }
            for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
                if bytes[start..<start + needle.count].elementsEqual(needle) { return true }
            }
            return false
        }
    }

    /// The path (`items.[2].name`) of the first JSON null or string holding U+0000 inside `json`, and what is wrong.
    private static func firstRefusedValue(in json: Any?, path: String? = nil) -> (field: String, problem: String)? {
        switch json {
        case is NSNull:
            return (path ?? "body", "must not be null; leave it out instead.")
        case let string as String:
            return string.contains("\u{0}") ? (path ?? "body", "must not contain the character U+0000.") : nil
        case let object as [String: Any]:
            for key in object.keys.sorted() {
                if let found = firstRefusedValue(in: object[key], path: path.map { "\($0).\(key)" } ?? key) {
                    return found
                }
            }
        case let array as [Any]:
            for (index, element) in array.enumerated() {
                if let found = firstRefusedValue(in: element, path: (path.map { "\($0)." } ?? "") + "[\(index)]") {
                    return found
                }
            }
        default:
            break
        }
        return nil
    }
}

extension Problem {
    /// A 400 describing what was wrong with a JSON body.
    init(decoding error: DecodingError) {
        func path(_ codingPath: [any CodingKey]) -> String? {
            codingPath.isEmpty
                ? nil : codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let field = path(context.codingPath + [key]) ?? key.stringValue
            self = .invalid(field, "\(field) is required.")
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            let field = path(context.codingPath) ?? "body"
            self = .invalid(field, "\(field) has the wrong type.")
        case .dataCorrupted(let context):
            if let field = path(context.codingPath) {
                self = .invalid(field, "\(field) is not valid: \(context.debugDescription)")
            } else {
                self = Problem(.badRequest, title: "Malformed JSON", detail: "The request body is not valid JSON.")
            }
        @unknown default:
            self = Problem(.badRequest, title: "Malformed JSON", detail: "The request body could not be read.")
        }
    }
}
