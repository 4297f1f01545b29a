import Foundation
import Logging
import Metrics
import ServiceKit
import ServiceLifecycle

/// Sends what waits in the mail outbox: each mail once, with any number of replicas (a mail is taken under a lease),
/// and again with a growing pause while the mail server fails, for a day; then it is given up on. `mails_total` on
/// `/metrics` counts them by outcome.
struct MailRelay: Service {
    let repository: AccountPostgresRepository
    let transport: any MailTransport
    let logger: Logger
    let sent: Counter
    let failed: Counter
    let givenUp: Counter
    /// How often the outbox is looked at when it had nothing to send.
    var interval: Duration = .milliseconds(500)
    /// Longer than a send may take (the transport's time-out): a mail is not taken by a second replica meanwhile.
    var lease: TimeInterval = 120
    var giveUpAfter: TimeInterval = 86_400

    init(repository: AccountPostgresRepository, transport: any MailTransport, metrics: ServiceMetrics, logger: Logger) {
        self.repository = repository
        self.transport = transport
        self.logger = logger
        sent = metrics.counter("mails_total", dimensions: [("outcome", "sent")])
        failed = metrics.counter("mails_total", dimensions: [("outcome", "failed")])
        givenUp = metrics.counter("mails_total", dimensions: [("outcome", "given_up")])
    }

    /// The pause after the `attempts`-th failure: 2, 4, 8 … seconds, at most five minutes.
    static func backoff(afterAttempts attempts: Int) -> TimeInterval {
        min(300, pow(2, Double(min(attempts, 16))))
    }

    func run() async throws {
        var lastPrune = ContinuousClock.now - .seconds(3600)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            var sentSome = false
            do {
                for due in try await repository.takeDueMail(limit: 10, lease: lease) {
                    await send(due)
                    sentSome = true
                }
                if ContinuousClock.now - lastPrune > .seconds(3600) {
                    try await repository.pruneMail(olderThan: 86_400)
                    lastPrune = .now
                }
            } catch {
                logger.warning("the mail outbox could not be read; retrying", metadata: ["error": "\(error)"])
            }
            if !sentSome { try? await Task.sleep(for: interval) }
        }
    }

    private func send(_ due: AccountPostgresRepository.DueMail) async {
        do {
            try await transport.send(due.mail, id: "\(due.messageId.uuidString.lowercased())@tarrare")
            try await repository.markMailSent(due.id)
            sent.increment()
        } catch {
            let attempts = due.attempts + 1
            let givingUp = Date().timeIntervalSince(due.createdAt) > giveUpAfter
            (givingUp ? givenUp : failed).increment()
            logger.warning(
                givingUp ? "a mail could not be sent for a day; given up" : "a mail could not be sent; trying again",
                metadata: ["mail": "\(due.id)", "attempts": "\(attempts)", "error": "\(error)"])
            try? await repository.markMailFailed(
                due.id, error: "\(error)", retryIn: Self.backoff(afterAttempts: attempts), givingUp: givingUp)
        }
    }
}
