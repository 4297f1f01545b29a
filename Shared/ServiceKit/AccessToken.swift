import Foundation
import Hummingbird
import JWTKit
import NIOConcurrencyHelpers

/// The claims of an access token, signed by accounts with Ed25519 and verified by every service.
public struct AccessTokenClaims: JWTPayload, Equatable {
    public var sub: SubjectClaim
    public var campus: String
    public var name: String
    public var iss: IssuerClaim
    public var aud: AudienceClaim
    public var exp: ExpirationClaim
    public var iat: IssuedAtClaim
    public var jti: IDClaim

    public init(
        userId: UUID, campus: String, name: String, issuer: String, audience: String, issuedAt: Date,
        lifetime: TimeInterval, tokenId: String = UUID().uuidString.lowercased()
    ) {
        sub = SubjectClaim(value: userId.uuidString.lowercased())
        self.campus = campus
        self.name = name
        iss = IssuerClaim(value: issuer)
        aud = AudienceClaim(value: [audience])
        exp = ExpirationClaim(value: issuedAt.addingTimeInterval(lifetime))
        iat = IssuedAtClaim(value: issuedAt)
        jti = IDClaim(value: tokenId)
    }

    /// Expiry only; issuer and audience are checked by `AccessTokenVerifier` against its configuration.
    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// The caller, as a verified access token says.
public struct Identity: Sendable, Equatable {
    public var userId: UUID
    public var campus: String
    public var name: String

    public init(userId: UUID, campus: String, name: String) {
        self.userId = userId
        self.campus = campus
        self.name = name
    }
}

/// Verifies access tokens with the public key from configuration: signature (EdDSA only), expiry, issuer, audience.
public struct AccessTokenVerifier: Sendable {
    let keys: JWTKeyCollection
    let issuer: String
    let audience: String
    /// Tokens already verified: a client sends the same token with every request until it expires, and checking its
    /// signature again cost more CPU than anything else a chat message does in the service.
    let verified = VerifiedTokens()

    public init(publicKeyPEM: String, issuer: String, audience: String) async throws {
        keys = JWTKeyCollection()
        await keys.add(eddsa: try EdDSA.PublicKey(pem: publicKeyPEM))
        self.issuer = issuer
        self.audience = audience
    }

    /// A verifier that also holds the private key, for the service that signs (accounts).
    public init(keys: JWTKeyCollection, issuer: String, audience: String) {
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
    }

    /// The identity in `token`, or 401 when anything about it is wrong.
    public func verify(_ token: String) async throws -> Identity {
        if let identity = verified.identity(of: token) { return identity }
        do {
            let claims = try await keys.verify(token, as: AccessTokenClaims.self)
            guard claims.iss.value == issuer else { throw Problem.unauthorized }
            try claims.aud.verifyIntendedAudience(includes: audience)
            guard let userId = UUID(uuidString: claims.sub.value) else { throw Problem.unauthorized }
            let identity = Identity(userId: userId, campus: claims.campus, name: claims.name)
            verified.keep(token, identity, until: claims.exp.value)
            return identity
        } catch {
            throw Problem.unauthorized
        }
    }
}

/// Sets `context.identity` from the bearer token and answers 401 when it is missing or invalid. Only the stream
/// takes the token from the `access_token` query parameter too (`acceptsQueryToken`): browsers cannot set a
/// WebSocket's headers, and anywhere else a token in a URL would end up in logs and histories.
public struct AuthenticationMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext
    let verifier: AccessTokenVerifier
    let acceptsQueryToken: Bool

    public init(verifier: AccessTokenVerifier, acceptsQueryToken: Bool = false) {
        self.verifier = verifier
        self.acceptsQueryToken = acceptsQueryToken
    }

    public func handle(
        _ request: Request, context: ServiceRequestContext,
        next: (Request, ServiceRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let token = acceptsQueryToken ? request.streamToken : request.bearerToken else {
            throw Problem.unauthorized
        }
        var context = context
        context.identity = try await verifier.verify(token)
        context.logger[metadataKey: "userId"] = "\(context.identity!.userId)"
        return try await next(request, context)
    }
}

extension Request {
    /// The token of an `Authorization: Bearer` header.
    public var bearerToken: String? {
        guard let header = headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        return parts.count == 2 && parts[0].lowercased() == "bearer" ? String(parts[1]) : nil
    }

    /// The stream's token: of the `Authorization` header, else of the `access_token` query parameter.
    public var streamToken: String? {
        headers[.authorization] != nil ? bearerToken : uri.queryParameters.get("access_token")
    }
}

/// Identities of tokens whose signature and claims were checked, each until its token expires; at most `capacity`,
/// after which the list starts again.
final class VerifiedTokens: Sendable {
    private let entries = NIOLockedValueBox<[String: (identity: Identity, expires: Date)]>([:])
    let capacity = 20_000

    func identity(of token: String) -> Identity? {
        guard let entry = entries.withLockedValue({ $0[token] }), entry.expires > Date() else { return nil }
        return entry.identity
    }

    func keep(_ token: String, _ identity: Identity, until expires: Date) {
        entries.withLockedValue { entries in
            if entries.count >= capacity { entries.removeAll() }
            entries[token] = (identity, expires)
        }
    }
}
