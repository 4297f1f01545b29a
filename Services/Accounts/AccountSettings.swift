import Foundation
import ServiceKit

/// Accounts' own settings, from the environment.
struct AccountSettings: Sendable {
    var privateKeyPEM: String
    var bcryptCost: Int
    var accessTokenLifetime: TimeInterval
    var refreshTokenLifetime: TimeInterval
    /// Where mail goes; nil writes it to the log.
    var smtp: SMTPSettings?
    /// Whether login waits for the address to be proved: by default wherever mail really goes out.
    var requiresEmailVerification: Bool
    /// Send codes even when verification is optional, so that a client can still confirm an address.
    var sendsVerificationCodes: Bool
    /// Where people open the web client, for the links in mail.
    var publicURL: String
    /// Codes sent again, and password resets asked for, per address.
    var resendsPerEmail: Throttle
    var resetsPerEmail: Throttle
    var loginFailuresPerAccount: Throttle
    var loginFailuresPerAddress: Throttle
    /// Each sign-up costs a bcrypt hash: one address may not burn the cores with them.
    var signUpsPerAddress: Throttle
    /// Reports one student may file within a day: enough for what a person meets, too few to flood the moderators.
    var reportsPerDay: Int
    var trustsForwardedFor: Bool

    init(_ configuration: ServiceConfiguration) throws {
        let reader = EnvironmentReader(values: configuration.environment)
        guard let key = try reader.fileOrValue("JWT_PRIVATE_KEY") else {
            throw ConfigurationError.missing("JWT_PRIVATE_KEY (or JWT_PRIVATE_KEY_FILE)")
        }
        privateKeyPEM = key
        bcryptCost = try reader.integer("BCRYPT_COST", in: 4...16) ?? 12
        accessTokenLifetime = TimeInterval(try reader.integer("ACCESS_TOKEN_SECONDS", in: 10...86_400) ?? 900)
        refreshTokenLifetime = TimeInterval(try reader.integer("REFRESH_TOKEN_DAYS", in: 1...365) ?? 30) * 86_400
        smtp = try SMTPSettings(reader)
        requiresEmailVerification = try reader.bool("REQUIRE_EMAIL_VERIFICATION") ?? (smtp != nil)
        sendsVerificationCodes = try reader.bool("SEND_VERIFICATION_CODES") ?? true
        let publicURL = reader.string("PUBLIC_URL") ?? "http://localhost:8080"
        guard let url = URL(string: publicURL), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
            throw ConfigurationError.invalid("PUBLIC_URL", "expected http(s)://host[:port], got \(publicURL)")
        }
        self.publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        resendsPerEmail = Throttle(
            limit: 1, window: TimeInterval(try reader.integer("RESEND_THROTTLE_SECONDS", in: 1...3600) ?? 60))
        resetsPerEmail = Throttle(limit: 3, window: 900)
        let loginWindow = TimeInterval(try reader.integer("LOGIN_THROTTLE_SECONDS", in: 1...86_400) ?? 900)
        loginFailuresPerAccount = Throttle(
            limit: try reader.integer("LOGIN_MAX_FAILURES_PER_ACCOUNT", in: 1...1000) ?? 5, window: loginWindow)
        loginFailuresPerAddress = Throttle(
            limit: try reader.integer("LOGIN_MAX_FAILURES_PER_ADDRESS", in: 1...10_000) ?? 50, window: loginWindow)
        signUpsPerAddress = Throttle(
            limit: try reader.integer("SIGNUP_MAX_PER_ADDRESS", in: 1...1_000_000) ?? 10,
            window: TimeInterval(try reader.integer("SIGNUP_THROTTLE_SECONDS", in: 1...86_400) ?? 3600))
        reportsPerDay = try reader.integer("REPORTS_PER_DAY", in: 1...10_000) ?? 10
        trustsForwardedFor = configuration.trustsForwardedFor
    }
}
