import Crypto
import Foundation
import JWTKit
import ServiceKit

/// A browser's push subscription: where its push service takes messages for it, and the keys that only the browser
/// can decrypt them with.
struct WebPushSubscription: Sendable {
    var endpoint: URL
    /// The browser's P-256 key (`p256dh`), as the uncompressed point it is sent as.
    var publicKey: P256.KeyAgreement.PublicKey
    /// The browser's 16 secret bytes (`auth`).
    var authSecret: Data

    /// Checks a subscription as the client sent it, naming the field that is wrong.
    init(endpoint: String, p256dh: String, auth: String) throws(NotificationError) {
        guard let url = URL(string: endpoint), let host = url.host, !host.isEmpty,
            url.scheme == "https" || (url.scheme == "http" && Self.isLoopback(host))
        else {
            throw .invalid(
                field: "subscription.endpoint", "The endpoint is the push service's https URL the browser gave.")
        }
        guard let point = Data(base64URLEncoded: p256dh), point.count == 65,
            let key = try? P256.KeyAgreement.PublicKey(x963Representation: point)
        else {
            throw .invalid(field: "subscription.keys.p256dh", "p256dh is the browser's P-256 key, base64url.")
        }
        guard let secret = Data(base64URLEncoded: auth), secret.count == 16 else {
            throw .invalid(field: "subscription.keys.auth", "auth is the browser's 16 secret bytes, base64url.")
        }
        self.endpoint = url
        publicKey = key
        authSecret = secret
    }

    init(endpoint: URL, publicKey: P256.KeyAgreement.PublicKey, authSecret: Data) {
        self.endpoint = endpoint
        self.publicKey = publicKey
        self.authSecret = authSecret
    }

    /// Only a push service on this machine may be spoken to in the clear: anywhere else the request would be
    /// readable on the way (its payload is encrypted, its VAPID token is not).
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return bare == "localhost" || bare == "::1" || bare.hasPrefix("127.")
    }
}

/// Message encryption for Web Push (RFC 8291), in the `aes128gcm` content coding (RFC 8188) in one record.
enum WebPushEncryption {
    /// The record size written in the header: the one record holds the whole payload.
    static let recordSize = 4096
    /// What a payload may be: the record less its padding delimiter and the AES-GCM tag.
    static let maxPayload = recordSize - 17

    /// The body of a push carrying `payload`. `serverKey` and `salt` are new for each message unless a test gives
    /// them.
    static func encrypt(
        _ payload: Data, for subscription: WebPushSubscription,
        serverKey: P256.KeyAgreement.PrivateKey = P256.KeyAgreement.PrivateKey(),
        salt: Data = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
    ) throws -> Data {
        precondition(payload.count <= maxPayload, "a push payload is at most \(maxPayload) bytes")
        let browserKey = subscription.publicKey.x963Representation
        let serverPublicKey = serverKey.publicKey.x963Representation
        let shared = try serverKey.sharedSecretFromKeyAgreement(with: subscription.publicKey)
        // The input keying material mixes the shared secret with the browser's auth secret and both public keys.
        let keyInfo = Data("WebPush: info".utf8) + [0] + browserKey + serverPublicKey
        let inputKey = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: subscription.authSecret, sharedInfo: keyInfo, outputByteCount: 32)
        let contentKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKey, salt: salt, info: Data("Content-Encoding: aes128gcm".utf8) + [0],
            outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKey, salt: salt, info: Data("Content-Encoding: nonce".utf8) + [0],
            outputByteCount: 12
        ).withUnsafeBytes { Data($0) }
        // The last (and only) record ends with the delimiter 2 and no padding.
        let sealed = try AES.GCM.seal(payload + [2], using: contentKey, nonce: AES.GCM.Nonce(data: nonce))
        var header = salt
        withUnsafeBytes(of: UInt32(recordSize).bigEndian) { header.append(contentsOf: $0) }
        header.append(UInt8(serverPublicKey.count))
        header.append(serverPublicKey)
        return header + sealed.ciphertext + sealed.tag
    }
}

/// The application server's identity to push services (VAPID, RFC 8292): a P-256 key whose public half browsers
/// subscribe with (`GET /v1/push/web`), and a contact.
struct VAPIDIdentity: Sendable {
    let keys: JWTKeyCollection
    /// The uncompressed public point, base64url: what a browser's `applicationServerKey` is.
    let publicKey: String
    /// `mailto:` or `https:` where a push service's operator can reach whoever runs this.
    let subject: String

    init(privateKeyPEM: String, subject: String) async throws {
        let key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        publicKey = key.publicKey.x963Representation.base64URLEncoded
        keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(pem: privateKeyPEM))
        self.subject = subject
    }

    struct Claims: JWTPayload {
        var aud: AudienceClaim
        var exp: ExpirationClaim
        var sub: SubjectClaim

        func verify(using algorithm: some JWTAlgorithm) throws {
            try exp.verifyNotExpired()
        }
    }

    /// The `Authorization` header for a push to `endpoint`: a token for its origin, valid twelve hours.
    func authorization(for endpoint: URL, now: Date = Date()) async throws -> String {
        var origin = "\(endpoint.scheme ?? "https")://\(endpoint.host ?? "")"
        if let port = endpoint.port { origin += ":\(port)" }
        let token = try await keys.sign(
            Claims(
                aud: AudienceClaim(value: origin), exp: ExpirationClaim(value: now.addingTimeInterval(12 * 3600)),
                sub: SubjectClaim(value: subject)))
        return "vapid t=\(token), k=\(publicKey)"
    }
}
