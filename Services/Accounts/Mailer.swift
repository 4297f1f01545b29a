import Logging

/// Sends the emails accounts needs (verification codes).
protocol Mailer: Sendable {
    func sendVerificationCode(_ code: String, to email: String) async throws
}

/// Writes the email to the log instead of sending it: the default for a local run.
struct LogMailer: Mailer {
    let logger: Logger

    func sendVerificationCode(_ code: String, to email: String) async throws {
        logger.notice("verification code", metadata: ["to": "\(email)", "code": "\(code)"])
    }
}
