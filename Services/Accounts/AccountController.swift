import Foundation
import Hummingbird
import ServiceKit

/// The accounts API: sign-up, login, token refresh and logout, the caller's profile, campuses, and the key set that
/// verifies access tokens. What emailed codes prove is `EmailController`'s.
struct AccountController: Sendable {
    let repository: AccountPostgresRepository
    let campuses: CampusDirectory
    let hasher: PasswordHasher
    let tokens: TokenIssuer
    let settings: AccountSettings

    func addRoutes(to router: Router<ServiceRequestContext>) {
        // Their answers hold tokens: no cache may keep them.
        router.group("/v1/auth").add(middleware: HeaderMiddleware(.cacheControl, "no-store"))
            .post("signup", use: signUp)
            .post("login", use: logIn)
            .post("refresh", use: refresh)
            .post("logout", use: logOut)
        router.get("/v1/campuses", use: listCampuses)
        router.get("/.well-known/jwks.json") { _, _ in tokens.jwks }
        router.group("/v1/me")
            .add(middleware: AuthenticationMiddleware(verifier: tokens.verifier))
            .get(use: me)
            .patch(use: updateMe)
            .delete(use: deleteMe)
    }

    // MARK: Requests and responses

    struct SignUpRequest: Decodable {
        var email: String
        var password: String
        var name: String
    }

    struct LogInRequest: Decodable {
        var email: String
        var password: String
    }

    struct RefreshRequest: Decodable {
        var refreshToken: String
    }

    struct DeleteMeRequest: Decodable {
        var password: String
    }

    struct UpdateMeRequest: Decodable {
        var name: String?
        var mode: Mode?
        var bio: String?
        /// An image the caller uploaded to media.
        var photoId: UUID?
    }

    /// Tokens with the user; on sign-up without tokens when the email must be verified first.
    struct Session: ResponseEncodable {
        var user: Account
        var accessToken: String?
        var refreshToken: String?
        var expiresIn: Int?
        var verificationRequired: Bool?
    }

    struct CampusList: ResponseEncodable {
        var campuses: [Campus]
    }

    // MARK: Handlers

    func signUp(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Session> {
        let input = try await request.decodeJSON(as: SignUpRequest.self, context: context)
        let (email, domain) = try AccountRules.normalizedEmail(input.email)
        guard let campus = campuses.campus(forDomain: domain) else { throw AccountError.unknownCampus(domain: domain) }
        try AccountRules.validatePassword(input.password)
        let name = try AccountRules.normalizedName(input.name)
        let addressKey =
            "signup:\(request.clientAddress(context: context, trustsForwardedFor: settings.trustsForwardedFor))"
        try await repository.enforce(
            settings.signUpsPerAddress, key: addressKey, refusal: "Too many sign-ups from this address.")
        let passwordHash = try await hasher.hash(input.password)
        let code =
            settings.requiresEmailVerification || settings.sendsVerificationCodes ? EmailController.newCode() : nil
        let account = try await repository.createAccount(
            email: email, passwordHash: passwordHash, name: name, campus: campus.domain,
            isVerified: false,
            verification: code.map {
                (
                    EmailController.hashCode($0), Date().addingTimeInterval(EmailController.codeLifetime),
                    AccountMails.verification(
                        to: email, name: name, code: $0, campus: campus.name, publicURL: settings.publicURL)
                )
            })
        context.logger.info("signed up", metadata: ["userId": "\(account.id)", "campus": "\(campus.domain)"])
        if settings.requiresEmailVerification {
            return EditedResponse(status: .created, response: Session(user: account, verificationRequired: true))
        }
        return EditedResponse(status: .created, response: try await newSession(for: account))
    }

    func logIn(request: Request, context: ServiceRequestContext) async throws -> Session {
        let input = try await request.decodeJSON(as: LogInRequest.self, context: context)
        let email = input.email.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        let address = request.clientAddress(context: context, trustsForwardedFor: settings.trustsForwardedFor)
        let accountKey = AccountRules.throttleKey(email: email)
        let addressKey = "address:\(address)"
        let (perAccount, perAddress) = (settings.loginFailuresPerAccount, settings.loginFailuresPerAddress)
        let failures = try await repository.recentEvents(
            keys: [accountKey, addressKey], window: max(perAccount.window, perAddress.window))
        let waits = [perAccount.retryAfter(failures[accountKey]), perAddress.retryAfter(failures[addressKey])]
        if let seconds = waits.compactMap({ $0 }).max() {
            throw AccountError.throttled("Too many failed attempts.", retryAfterSeconds: seconds)
        }
        // NB: an unknown email is checked against a decoy hash, so both failures take the same time.
        let credentials = input.password.utf8.count <= 72 ? try await repository.credentials(email: email) : nil
        guard try await hasher.verify(input.password, against: credentials?.passwordHash), let credentials else {
            try await repository.recordEvent(
                keys: [accountKey, addressKey], window: max(perAccount.window, perAddress.window))
            throw AccountError.invalidCredentials
        }
        try await repository.clearEvents(key: accountKey)
        if settings.requiresEmailVerification && !credentials.account.isEmailVerified {
            throw AccountError.emailNotVerified
        }
        if let reason = try await repository.suspension(of: credentials.account.id) {
            throw AccountError.suspended(reason: reason)
        }
        return try await newSession(for: credentials.account)
    }

    func refresh(request: Request, context: ServiceRequestContext) async throws -> Session {
        let input = try await request.decodeJSON(as: RefreshRequest.self, context: context)
        let (token, hash) = TokenIssuer.newRefreshToken()
        switch try await repository.rotateRefreshToken(
            oldHash: TokenIssuer.hashRefreshToken(input.refreshToken), newHash: hash,
            expiresAt: Date().addingTimeInterval(tokens.refreshTokenLifetime))
        {
        case .rotated(let account):
            return Session(
                user: account, accessToken: try await tokens.accessToken(for: account), refreshToken: token,
                expiresIn: Int(tokens.accessTokenLifetime))
        case .reused:
            context.logger.warning("a spent refresh token was reused; its session is revoked")
            throw AccountError.invalidRefreshToken
        case .invalid:
            throw AccountError.invalidRefreshToken
        }
    }

    func logOut(request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        let input = try await request.decodeJSON(as: RefreshRequest.self, context: context)
        try await repository.revokeFamily(ofTokenHash: TokenIssuer.hashRefreshToken(input.refreshToken))
        return .noContent
    }

    func me(request: Request, context: ServiceRequestContext) async throws -> Account {
        let identity = try context.requireIdentity()
        guard let account = try await repository.account(id: identity.userId) else { throw Problem.notFound() }
        return account
    }

    func updateMe(request: Request, context: ServiceRequestContext) async throws -> Account {
        let identity = try context.requireIdentity()
        let input = try await request.decodeJSON(as: UpdateMeRequest.self, context: context)
        let change = AccountPostgresRepository.ProfileChange(
            name: try input.name.map { try AccountRules.normalizedName($0) }, mode: input.mode,
            bio: try input.bio.map { try AccountRules.normalizedBio($0) }, photoId: input.photoId)
        guard let account = try await repository.updateProfile(id: identity.userId, change) else {
            throw Problem.notFound()
        }
        return account
    }

    /// Deletes the caller's account once their password is given again (401 when wrong, nothing deleted; failures
    /// are throttled like logins). Every other service erases what it holds of them on `user.deleted`.
    func deleteMe(request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        let input = try await request.decodeJSON(as: DeleteMeRequest.self, context: context)
        let key = "delete:\(identity.userId)"
        let throttle = settings.loginFailuresPerAccount
        try await repository.enforce(throttle, key: key, refusal: "Too many wrong passwords.", recording: false)
        let credentials = input.password.utf8.count <= 72 ? try await repository.credentials(id: identity.userId) : nil
        guard try await hasher.verify(input.password, against: credentials?.passwordHash) else {
            try await repository.recordEvent(keys: [key], window: throttle.window)
            throw credentials == nil && input.password.utf8.count <= 72
                ? Problem.notFound() : AccountError.wrongPassword
        }
        guard try await repository.deleteAccount(identity.userId) else { throw Problem.notFound() }
        try await repository.clearEvents(key: key)
        context.logger.info("deleted an account", metadata: ["userId": "\(identity.userId)"])
        return .noContent
    }

    func listCampuses(request: Request, context: ServiceRequestContext) async throws -> CampusList {
        CampusList(campuses: campuses.all)
    }

    // MARK: Helpers

    private func newSession(for account: Account) async throws -> Session {
        let (refreshToken, hash) = TokenIssuer.newRefreshToken()
        try await repository.storeRefreshToken(
            userId: account.id, familyId: UUID(), hash: hash,
            expiresAt: Date().addingTimeInterval(tokens.refreshTokenLifetime))
        return Session(
            user: account, accessToken: try await tokens.accessToken(for: account), refreshToken: refreshToken,
            expiresIn: Int(tokens.accessTokenLifetime))
    }
}

extension Account: ResponseEncodable {}
extension JWKSet: ResponseEncodable {}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
