import AsyncHTTPClient
import Foundation
import JWTKit
import NIOCore
import ServiceKit

/// A Google service account's key file, as the Firebase console gives it: the project, who the account is, its RSA key
/// and where access tokens are had.
struct FCMServiceAccount: Sendable, Decodable {
    var projectId: String
    var privateKeyId: String
    var privateKey: String
    var clientEmail: String
    var tokenURI: URL

    enum CodingKeys: String, CodingKey {
        case projectId = "project_id"
        case privateKeyId = "private_key_id"
        case privateKey = "private_key"
        case clientEmail = "client_email"
        case tokenURI = "token_uri"
    }
}

/// Firebase Cloud Messaging's settings: the service account of `FCM_SERVICE_ACCOUNT_FILE` (or `FCM_SERVICE_ACCOUNT`)
/// and `FCM_URL` (Google's service unless set).
struct FCMSettings: Sendable {
    var url: URL
    var account: FCMServiceAccount

    static func read(_ reader: EnvironmentReader) throws -> FCMSettings? {
        guard let json = try reader.fileOrValue("FCM_SERVICE_ACCOUNT"), !json.allSatisfy(\.isWhitespace) else {
            return nil
        }
        guard let account = try? JSONDecoder().decode(FCMServiceAccount.self, from: Data(json.utf8)) else {
            throw ConfigurationError.invalid(
                "FCM_SERVICE_ACCOUNT",
                "expected a service account's key file (project_id, private_key_id, private_key, client_email, token_uri)"
            )
        }
        guard let host = account.tokenURI.host,
            account.tokenURI.scheme == "https"
                || (account.tokenURI.scheme == "http" && WebPushSubscription.isLoopback(host))
        else {
            throw ConfigurationError.invalid("FCM_SERVICE_ACCOUNT", "token_uri is https (http on loopback only)")
        }
        return FCMSettings(
            url: try pushServiceURL(reader.string("FCM_URL") ?? "https://fcm.googleapis.com", variable: "FCM_URL"),
            account: account)
    }
}

/// The OAuth 2 access token FCM takes: had from the service account's token endpoint for a JWT the account signs
/// (RS256), and kept until a minute before it expires.
actor FCMAccessToken {
    private let keys = JWTKeyCollection()
    private let account: FCMServiceAccount
    private let client: HTTPClient
    private var current: (token: String, expiresAt: Date)?
    private var pending: Task<String, any Error>?

    static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    init(account: FCMServiceAccount, client: HTTPClient) async throws {
        self.account = account
        self.client = client
        do {
            await keys.add(
                rsa: try Insecure.RSA.PrivateKey(pem: account.privateKey), digestAlgorithm: .sha256,
                kid: JWKIdentifier(string: account.privateKeyId))
        } catch {
            throw ConfigurationError.invalid("FCM_SERVICE_ACCOUNT", "private_key is not an RSA private key in PEM")
        }
    }

    struct Claims: JWTPayload {
        var iss: IssuerClaim
        var scope: String
        var aud: AudienceClaim
        var iat: IssuedAtClaim
        var exp: ExpirationClaim

        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    struct Refused: Error, CustomStringConvertible {
        var status: UInt
        var description: String { "the token endpoint answered \(status)" }
    }

    /// The token to send; a new one when it is about to expire, or when `renew` (FCM refused the one sent). Pushes
    /// that ask while a new one is being had wait for that one, so that one grant serves them all.
    func token(renew: Bool = false, now: Date = Date()) async throws -> String {
        if !renew, let current, current.expiresAt.timeIntervalSince(now) > 60 { return current.token }
        if let pending { return try await pending.value }
        let task = Task { try await self.grant(now: now) }
        pending = task
        defer { pending = nil }
        return try await task.value
    }

    /// A new token from the token endpoint, kept as the current one.
    private func grant(now: Date) async throws -> String {
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let assertion = try await keys.sign(
            Claims(
                iss: IssuerClaim(value: account.clientEmail), scope: Self.scope,
                aud: AudienceClaim(value: account.tokenURI.absoluteString), iat: IssuedAtClaim(value: issuedAt),
                exp: ExpirationClaim(value: issuedAt.addingTimeInterval(3600))),
            kid: JWKIdentifier(string: account.privateKeyId))
        var request = HTTPClientRequest(url: account.tokenURI.absoluteString)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        // NB: a JWT is base64url and dots: nothing in it needs escaping in a form.
        request.body = .bytes(
            ByteBuffer(
                string: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)"))
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 * 1024)
        struct Granted: Decodable {
            var accessToken: String
            var expiresIn: Double

            enum CodingKeys: String, CodingKey {
                case accessToken = "access_token"
                case expiresIn = "expires_in"
            }
        }
        guard response.status.code == 200 else { throw Refused(status: response.status.code) }
        let granted = try JSONDecoder().decode(Granted.self, from: Data(buffer: body))
        current = (granted.accessToken, now.addingTimeInterval(granted.expiresIn))
        return granted.accessToken
    }
}

/// Firebase Cloud Messaging's HTTP v1 API.
struct FCMSender: PushSender {
    let settings: FCMSettings
    let accessToken: FCMAccessToken
    let client: HTTPClient

    /// The request's body: the notification Android shows, and the entry's type, seq, screen and badge as data (FCM's
    /// data are strings).
    static func body(of message: PushMessage, token: String) -> Data {
        var data = ["type": message.type, "seq": String(message.seq)]
        data["open"] = message.open
        data["badge"] = message.badge.map(String.init)
        var android: [String: Any] = [
            "ttl": "\(message.timeToLive)s", "priority": message.isUrgent ? "HIGH" : "NORMAL",
        ]
        android["collapse_key"] = message.collapseKey
        if let badge = message.badge { android["notification"] = ["notification_count": badge] }
        let object: [String: Any] = [
            "message": [
                "token": token, "notification": ["title": message.title, "body": message.body], "data": data,
                "android": android,
            ]
        ]
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }

    func send(_ message: PushMessage, to device: PushDevice) async -> PushOutcome {
        let url = settings.url.appendingPathComponent("v1/projects/\(settings.account.projectId)/messages:send")
        var renew = false
        // NB: at most one more try, with a new access token, when FCM refuses the one sent.
        for _ in 0..<2 {
            do {
                var request = HTTPClientRequest(url: url.absoluteString)
                request.method = .POST
                request.headers.add(name: "authorization", value: "Bearer \(try await accessToken.token(renew: renew))")
                request.headers.add(name: "content-type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: Self.body(of: message, token: device.token)))
                let response = try await client.execute(request, timeout: .seconds(30))
                _ = try? await response.body.collect(upTo: 64 * 1024)
                let retryAfter = response.headers.first(name: "retry-after").flatMap(TimeInterval.init)
                switch response.status.code {
                case 200..<300: return .sent
                case 404, 410: return .gone
                case 401: renew = true
                case 429, 500..<600: return .retry(after: retryAfter)
                case let status: return .failed("FCM answered \(status)")
                }
            } catch {
                return .retry(after: nil)
            }
        }
        return .retry(after: nil)
    }
}
