import Crypto
import Foundation
import JWTKit
import ServiceKit

/// Signs access tokens with the Ed25519 private key and makes opaque refresh tokens.
struct TokenIssuer: Sendable {
    let keys: JWTKeyCollection
    let publicKey: EdDSA.PublicKey
    let issuer: String
    let audience: String
    let accessTokenLifetime: TimeInterval
    let refreshTokenLifetime: TimeInterval

    init(
        privateKeyPEM: String, issuer: String, audience: String, accessTokenLifetime: TimeInterval,
        refreshTokenLifetime: TimeInterval
    ) async throws {
        let privateKey = try EdDSA.PrivateKey(pem: privateKeyPEM)
        publicKey = privateKey.publicKey
        keys = JWTKeyCollection()
        await keys.add(eddsa: privateKey, kid: JWKIdentifier(string: Self.keyId(publicKey)))
        self.issuer = issuer
        self.audience = audience
        self.accessTokenLifetime = accessTokenLifetime
        self.refreshTokenLifetime = refreshTokenLifetime
    }

    /// A verifier over the same key, for this service's own authenticated routes.
    var verifier: AccessTokenVerifier {
        AccessTokenVerifier(keys: keys, issuer: issuer, audience: audience)
    }

    func accessToken(for account: Account, now: Date = Date()) async throws -> String {
        let claims = AccessTokenClaims(
            userId: account.id, campus: account.campus, name: account.name, issuer: issuer, audience: audience,
            issuedAt: now, lifetime: accessTokenLifetime)
        return try await keys.sign(claims, kid: JWKIdentifier(string: Self.keyId(publicKey)))
    }

    /// A new 256-bit refresh token (base64url) and the SHA-256 hash that is stored in its place.
    static func newRefreshToken() -> (token: String, hash: Data) {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        let token = bytes.base64URLEncoded
        return (token, hashRefreshToken(token))
    }

    static func hashRefreshToken(_ token: String) -> Data {
        Data(SHA256.hash(data: Data(token.utf8)))
    }

    /// The JSON Web Key Set that verifies access tokens.
    var jwks: JWKSet {
        JWKSet(keys: [
            .init(
                kty: "OKP", crv: "Ed25519", x: publicKey.rawRepresentation.base64URLEncoded, kid: Self.keyId(publicKey))
        ])
    }

    private static func keyId(_ key: EdDSA.PublicKey) -> String {
        String(Data(SHA256.hash(data: key.rawRepresentation)).base64URLEncoded.prefix(16))
    }
}

/// `GET /.well-known/jwks.json`.
struct JWKSet: Codable, Sendable {
    struct Key: Codable, Sendable {
        var kty: String
        var crv: String
        var x: String
        var kid: String
        var alg = "EdDSA"
        var use = "sig"
    }

    var keys: [Key]
}
