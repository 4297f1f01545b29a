import Crypto
import Foundation
import Hummingbird
import ServiceKit

/// The TURN servers a signed-in student's client may relay a call through, with credentials in coturn's shared-secret
/// scheme (its `use-auth-secret`): the username is `<expiry>:<user id>`, the password base64(HMAC-SHA1(secret,
/// username)); coturn checks both and the expiry without asking us. The secret never leaves the server.
struct TurnSettings: Sendable {
    /// `turn:` and `turns:` URLs, as the client's RTCPeerConnection takes them.
    var urls: [String]
    var secret: String?
    /// How long credentials last: an hour.
    var lifetime: TimeInterval

    init(_ reader: EnvironmentReader) throws {
        urls = (reader.string("TURN_URLS") ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty }
        for url in urls where !(url.hasPrefix("turn:") || url.hasPrefix("turns:") || url.hasPrefix("stun:")) {
            throw ConfigurationError.invalid("TURN_URLS", "expected turn:, turns: or stun: URLs, got \(url)")
        }
        // NB: a secret file ends with a newline that coturn's configuration does not keep.
        secret = try reader.fileOrValue("TURN_SECRET")?.trimmingCharacters(in: .whitespacesAndNewlines)
        if !urls.isEmpty, secret == nil, urls.contains(where: { !$0.hasPrefix("stun:") }) {
            throw ConfigurationError.missing("TURN_SECRET (or TURN_SECRET_FILE) for the TURN_URLS")
        }
        lifetime = TimeInterval(try reader.integer("TURN_CREDENTIAL_SECONDS", in: 60...86_400) ?? 3600)
    }

    /// What `GET /v1/calls/ice-servers` answers `userId` at `now`.
    func iceServers(for userId: UUID, now: Date = Date()) -> IceServers {
        guard let secret, !urls.isEmpty else { return IceServers(iceServers: [], ttl: Int(lifetime)) }
        let expiry = Int(now.timeIntervalSince1970 + lifetime)
        let username = "\(expiry):\(userId.uuidString.lowercased())"
        let mac = HMAC<Insecure.SHA1>.authenticationCode(
            for: Data(username.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return IceServers(
            iceServers: [IceServer(urls: urls, username: username, credential: Data(mac).base64EncodedString())],
            ttl: Int(lifetime))
    }
}

/// An RTCIceServer as the browser's RTCPeerConnection takes it.
struct IceServer: Codable, Sendable, Equatable {
    var urls: [String]
    var username: String
    var credential: String
}

struct IceServers: Codable, Sendable, Equatable, ResponseEncodable {
    var iceServers: [IceServer]
    /// Seconds the credentials last.
    var ttl: Int
}
