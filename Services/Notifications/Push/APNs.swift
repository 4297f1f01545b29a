import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore
import ServiceKit

/// Who this backend is to Apple's push service: a signing key (`.p8`, ES256) with its key id, the team it belongs to,
/// the apps' bundle id (the topic), and where the service is.
struct APNsSettings: Sendable {
    var url: URL
    var keyPEM: String
    var keyId: String
    var teamId: String
    var topic: String

    /// From `APNS_KEY_FILE` (or `APNS_KEY`), `APNS_KEY_ID`, `APNS_TEAM_ID`, `APNS_TOPIC` and `APNS_URL` (Apple's
    /// production service unless set); nil without a key (an empty file is none).
    static func read(_ reader: EnvironmentReader) throws -> APNsSettings? {
        guard let keyPEM = try reader.fileOrValue("APNS_KEY"), !keyPEM.allSatisfy(\.isWhitespace) else { return nil }
        return APNsSettings(
            url: try pushServiceURL(reader.string("APNS_URL") ?? "https://api.push.apple.com", variable: "APNS_URL"),
            keyPEM: keyPEM,
            keyId: try reader.string("APNS_KEY_ID", required: true) ?? "",
            teamId: try reader.string("APNS_TEAM_ID", required: true) ?? "",
            topic: try reader.string("APNS_TOPIC", required: true) ?? "")
    }
}

/// The base URL of a push service, as `variable` gives it: https, or http on loopback only (a stand-in of the tests).
func pushServiceURL(_ text: String, variable: String) throws -> URL {
    guard let url = URL(string: text), let host = url.host,
        url.scheme == "https" || (url.scheme == "http" && WebPushSubscription.isLoopback(host))
    else { throw ConfigurationError.invalid(variable, "expected an https URL (http on loopback only), got \(text)") }
    return url
}

/// The provider token APNs takes in place of a certificate: an ES256 JWT of the team, signed with the key, renewed
/// every 40 minutes (APNs refuses one older than an hour, and one renewed more often than every 20 minutes).
actor APNsProviderToken {
    private let keys = JWTKeyCollection()
    private let settings: APNsSettings
    private var current: (token: String, issuedAt: Date)?
    private var pending: Task<String, any Error>?

    init(settings: APNsSettings) async throws {
        self.settings = settings
        do {
            await keys.add(ecdsa: try ES256PrivateKey(pem: settings.keyPEM), kid: JWKIdentifier(string: settings.keyId))
        } catch {
            throw ConfigurationError.invalid("APNS_KEY", "expected a P-256 private key (.p8) in PEM")
        }
    }

    struct Claims: JWTPayload {
        var iss: IssuerClaim
        var iat: IssuedAtClaim

        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// The token to send; a new one when it is 40 minutes old, or when `renew` (APNs said it expired). Pushes that
    /// ask while a new one is being signed wait for that one: APNs refuses tokens renewed too often.
    func token(renew: Bool = false, now: Date = Date()) async throws -> String {
        if !renew, let current, now.timeIntervalSince(current.issuedAt) < 40 * 60 { return current.token }
        if let pending { return try await pending.value }
        let task = Task { try await self.sign(now: now) }
        pending = task
        defer { pending = nil }
        return try await task.value
    }

    /// A new token, kept as the current one.
    private func sign(now: Date) async throws -> String {
        // NB: APNs reads `iat` in whole seconds.
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let token = try await keys.sign(
            Claims(iss: IssuerClaim(value: settings.teamId), iat: IssuedAtClaim(value: issuedAt)),
            kid: JWKIdentifier(string: settings.keyId))
        current = (token, issuedAt)
        return token
    }
}

/// Apple's push service: the HTTP/2 provider API with token authentication.
struct APNsSender: PushSender {
    let settings: APNsSettings
    let providerToken: APNsProviderToken
    let client: HTTPClient

    /// The JSON an app is given: `aps` for the system (the alert, the badge, a sound) beside what to open.
    static func payload(of message: PushMessage) -> Data {
        var aps: [String: Any] = ["alert": ["title": message.title, "body": message.body], "sound": "default"]
        aps["badge"] = message.badge
        var object: [String: Any] = ["aps": aps, "type": message.type, "seq": message.seq]
        object["open"] = message.open
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }

    func send(_ message: PushMessage, to device: PushDevice) async -> PushOutcome {
        var renew = false
        // NB: at most one more try, with a new provider token, when APNs says the one sent has expired.
        for _ in 0..<2 {
            do {
                var request = HTTPClientRequest(
                    url: settings.url.appendingPathComponent("3/device/\(device.token)").absoluteString)
                request.method = .POST
                request.headers.add(
                    name: "authorization", value: "bearer \(try await providerToken.token(renew: renew))")
                request.headers.add(name: "apns-topic", value: settings.topic)
                request.headers.add(name: "apns-push-type", value: "alert")
                request.headers.add(name: "apns-priority", value: message.isUrgent ? "10" : "5")
                let expiration =
                    message.timeToLive == 0 ? 0 : Int(Date().timeIntervalSince1970) + message.timeToLive
                request.headers.add(name: "apns-expiration", value: String(expiration))
                if let collapse = message.collapseKey { request.headers.add(name: "apns-collapse-id", value: collapse) }
                request.body = .bytes(ByteBuffer(bytes: Self.payload(of: message)))
                let response = try await client.execute(request, timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 64 * 1024)
                let reason =
                    (try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any])?["reason"]
                    as? String
                let retryAfter = response.headers.first(name: "retry-after").flatMap(TimeInterval.init)
                switch (response.status.code, reason) {
                case (200, _): return .sent
                case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"): return .gone
                case (403, "ExpiredProviderToken"): renew = true
                case (429, _), (500..<600, _): return .retry(after: retryAfter)
                case (let status, let reason): return .failed("APNs answered \(status) \(reason ?? "")")
                }
            } catch {
                return .retry(after: nil)
            }
        }
        return .retry(after: nil)
    }
}
