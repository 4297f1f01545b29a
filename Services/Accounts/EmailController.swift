import Crypto
import Foundation
import Hummingbird
import ServiceKit

/// What an emailed code proves: that the address is the person's (verification, and a code sent again), and that a
/// person who forgot their password may set a new one. Neither says whether an address has an account.
struct EmailController: Sendable {
    let repository: AccountPostgresRepository
    let campuses: CampusDirectory
    let hasher: PasswordHasher
    let settings: AccountSettings

    /// How long a code holds.
    static let codeLifetime: TimeInterval = 15 * 60

    func addRoutes(to router: Router<ServiceRequestContext>) {
        router.group("/v1/auth").add(middleware: HeaderMiddleware(.cacheControl, "no-store"))
            .post("verify", use: verify)
            .post("verify/resend", use: resend)
            .post("password-reset", use: startReset)
            .post("password-reset/confirm", use: finishReset)
    }

    struct EmailRequest: Decodable {
        var email: String
    }

    struct VerifyRequest: Decodable {
        var email: String
        var code: String
    }

    struct ResetRequest: Decodable {
        var email: String
        var code: String
        var password: String
    }

    func verify(request: Request, context: ServiceRequestContext) async throws -> Account {
        let input = try await request.decodeJSON(as: VerifyRequest.self, context: context)
        let (email, _) = try AccountRules.normalizedEmail(input.email)
        let code = try Self.validCode(input.code)
        guard let account = try await repository.verifyEmail(email: email, codeHash: Self.hashCode(code)) else {
            throw AccountError.invalidVerificationCode
        }
        return account
    }

    /// 202 whether or not the address has an account waiting for its code; a new code when it has.
    func resend(request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        let input = try await request.decodeJSON(as: EmailRequest.self, context: context)
        let (email, _) = try AccountRules.normalizedEmail(input.email)
        try await repository.enforce(
            settings.resendsPerEmail, key: "resend:\(AccountRules.throttleKey(email: email))", refusal: Self.tooMany)
        let code = Self.newCode()
        _ = try await repository.issueCode(
            .verification, email: email, codeHash: Self.hashCode(code),
            expiresAt: Date().addingTimeInterval(Self.codeLifetime)
        ) { name, campus in
            AccountMails.verification(
                to: email, name: name, code: code, campus: campuses.campus(forDomain: campus)?.name ?? campus,
                publicURL: settings.publicURL)
        }
        return .accepted
    }

    /// 202 whether or not the address has an account; a code by mail when it has.
    func startReset(request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        let input = try await request.decodeJSON(as: EmailRequest.self, context: context)
        let (email, _) = try AccountRules.normalizedEmail(input.email)
        try await repository.enforce(
            settings.resetsPerEmail, key: "reset:\(AccountRules.throttleKey(email: email))", refusal: Self.tooMany)
        let code = Self.newCode()
        let started = try await repository.issueCode(
            .passwordReset, email: email, codeHash: Self.hashCode(code),
            expiresAt: Date().addingTimeInterval(Self.codeLifetime)
        ) { name, _ in
            AccountMails.passwordReset(to: email, name: name, code: code)
        }
        if started { context.logger.info("a password reset was asked for") }
        return .accepted
    }

    /// Sets the new password and ends every session of the account; wrong codes are throttled like failed logins.
    func finishReset(request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        let input = try await request.decodeJSON(as: ResetRequest.self, context: context)
        let (email, _) = try AccountRules.normalizedEmail(input.email)
        let code = try Self.validCode(input.code)
        try AccountRules.validatePassword(input.password)
        let key = AccountRules.throttleKey(email: email)
        try await repository.enforce(
            settings.loginFailuresPerAccount, key: key, refusal: Self.tooMany, recording: false)
        let passwordHash = try await hasher.hash(input.password)
        guard
            try await repository.finishPasswordReset(
                email: email, codeHash: Self.hashCode(code), passwordHash: passwordHash)
        else {
            try await repository.recordEvent(keys: [key], window: settings.loginFailuresPerAccount.window)
            throw AccountError.invalidVerificationCode
        }
        try await repository.clearEvents(key: key)
        return .noContent
    }

    // MARK: Helpers

    private static let tooMany = "Too many requests for this address."

    private static func validCode(_ text: String) throws -> String {
        let code = text.trimmingCharacters(in: .whitespaces)
        guard code.count == 6, code.allSatisfy(\.isASCIIDigit) else {
            throw AccountError.invalid(field: "code", "The code is six digits.")
        }
        return code
    }

    static func newCode() -> String {
        String(format: "%06d", Int.random(in: 0..<1_000_000))
    }

    static func hashCode(_ code: String) -> Data {
        Data(SHA256.hash(data: Data(code.utf8)))
    }
}
