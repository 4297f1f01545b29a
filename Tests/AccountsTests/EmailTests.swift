import Foundation
import HummingbirdTesting
import Logging
import Messaging
import NIOConcurrencyHelpers
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import Accounts

/// Codes by mail on real PostgreSQL: what the outbox holds is what the relay sends (here to the log; the system
/// tests send it to a real SMTP server).
@Suite struct EmailTests {
    @Test func aCodeByMailProvesTheAddressAndOnlyThenMayTheStudentLogIn() async throws {
        let app = try await AccountsTestApp.make(["REQUIRE_EMAIL_VERIFICATION": "true"])

        try await app.test { client in
            let signup = try await client.signUp("mail.first@helsinki.fi")
            #expect(signup["verificationRequired"] as? Bool == true && signup["accessToken"] == nil)
            let mail = try await app.mail(to: "mail.first@helsinki.fi")
            #expect(mail.subject == "Confirm your email for Tarrare")
            #expect(mail.body.contains("University of Helsinki"))
            let code = try mail.code()
            #expect(mail.body.contains("http://localhost:8080/#/verify/mail.first%40helsinki.fi/\(code)"))

            let (beforeStatus, before) = try await client.post(
                "/v1/auth/login", ["email": "mail.first@helsinki.fi", "password": "correct horse battery"])
            #expect(beforeStatus == .forbidden && before["type"] as? String == "/problems/email-not-verified")
            // A code of another address proves nothing here.
            _ = try await client.signUp("mail.other@helsinki.fi")
            let otherCode = try await app.mail(to: "mail.other@helsinki.fi").code()
            if otherCode != code {
                let (crossed, problem) = try await client.post(
                    "/v1/auth/verify", ["email": "mail.first@helsinki.fi", "code": otherCode])
                #expect(crossed == .badRequest && problem["field"] as? String == "code")
            }
            let (verified, user) = try await client.post(
                "/v1/auth/verify", ["email": "mail.first@helsinki.fi", "code": code])
            #expect(verified == .ok && user["emailVerified"] as? Bool == true)
            let (after, _) = try await client.post(
                "/v1/auth/login", ["email": "mail.first@helsinki.fi", "password": "correct horse battery"])
            #expect(after == .ok)
            try await eventually("the relay sent both mails (to the log)") {
                try await app.database.pool.query("SELECT 1 FROM mail_outbox WHERE sent_at IS NULL").isEmpty
            }
        }
    }

    @Test func aCodeSentAgainReplacesTheFirstAndAskingTwiceInAMinuteIsThrottled() async throws {
        let app = try await AccountsTestApp.make(["REQUIRE_EMAIL_VERIFICATION": "true"])

        try await app.test { client in
            _ = try await client.signUp("again@helsinki.fi")
            let first = try await app.mail(to: "again@helsinki.fi").code()
            let (resent, _) = try await client.post("/v1/auth/verify/resend", ["email": "again@helsinki.fi"])
            #expect(resent == .accepted)
            let mails = try await app.mails(to: "again@helsinki.fi")
            #expect(mails.count == 2)
            let second = try mails[1].code()

            let (throttled, problem) = try await client.post("/v1/auth/verify/resend", ["email": "again@helsinki.fi"])
            #expect(throttled == .tooManyRequests && (problem["detail"] as? String)?.contains("seconds") == true)
            #expect(try await app.mails(to: "again@helsinki.fi").count == 2)
            // Nobody learns whether an address has an account: the same answer, and no mail.
            let (unknown, _) = try await client.post("/v1/auth/verify/resend", ["email": "nobody@helsinki.fi"])
            #expect(unknown == .accepted)
            #expect(try await app.mails(to: "nobody@helsinki.fi").isEmpty)

            if first != second {
                let (old, _) = try await client.post("/v1/auth/verify", ["email": "again@helsinki.fi", "code": first])
                #expect(old == .badRequest)
            }
            let (verified, _) = try await client.post(
                "/v1/auth/verify", ["email": "again@helsinki.fi", "code": second])
            #expect(verified == .ok)
            // A verified address is sent no more codes.
            try await app.database.pool.query("DELETE FROM throttle_events")
            #expect(try await client.post("/v1/auth/verify/resend", ["email": "again@helsinki.fi"]).0 == .accepted)
            #expect(try await app.mails(to: "again@helsinki.fi").count == 2)
        }
    }

    @Test func fiveWrongCodesSpendTheCodeAndAnExpiredCodeProvesNothing() async throws {
        let app = try await AccountsTestApp.make(["REQUIRE_EMAIL_VERIFICATION": "true"])

        try await app.test { client in
            _ = try await client.signUp("guess@helsinki.fi")
            let code = try await app.mail(to: "guess@helsinki.fi").code()
            let wrong = code == "000000" ? "111111" : "000000"
            for _ in 0..<5 {
                #expect(
                    try await client.post("/v1/auth/verify", ["email": "guess@helsinki.fi", "code": wrong]).0
                        == .badRequest)
            }
            #expect(
                try await client.post("/v1/auth/verify", ["email": "guess@helsinki.fi", "code": code]).0 == .badRequest)

            _ = try await client.signUp("late@helsinki.fi")
            let late = try await app.mail(to: "late@helsinki.fi").code()
            try await app.database.pool.query(
                "UPDATE email_verifications SET expires_at = now() - interval '1 second'")
            #expect(
                try await client.post("/v1/auth/verify", ["email": "late@helsinki.fi", "code": late]).0 == .badRequest)
        }
    }

    @Test func aPasswordResetByMailSetsANewPasswordAndEndsEverySession() async throws {
        let app = try await AccountsTestApp.make()

        try await app.test { client in
            _ = try await client.signUp("forgot@helsinki.fi")
            let (_, login) = try await client.post(
                "/v1/auth/login", ["email": "forgot@helsinki.fi", "password": "correct horse battery"])
            let refreshToken = try #require(login["refreshToken"] as? String)

            let (asked, _) = try await client.post("/v1/auth/password-reset", ["email": "forgot@helsinki.fi"])
            #expect(asked == .accepted)
            let mail = try await app.mail(to: "forgot@helsinki.fi", subject: "Reset your Tarrare password")
            let code = try mail.code()
            // Bad input changes nothing: a weak password, a malformed code, a wrong one.
            let (weak, weakProblem) = try await client.post(
                "/v1/auth/password-reset/confirm", ["email": "forgot@helsinki.fi", "code": code, "password": "short"])
            #expect(weak == .badRequest && weakProblem["field"] as? String == "password")
            let (malformed, malformedProblem) = try await client.post(
                "/v1/auth/password-reset/confirm",
                ["email": "forgot@helsinki.fi", "code": "12ab56", "password": "a new long secret"])
            #expect(malformed == .badRequest && malformedProblem["field"] as? String == "code")
            let wrongCode = code == "000000" ? "111111" : "000000"
            let (wrong, _) = try await client.post(
                "/v1/auth/password-reset/confirm",
                ["email": "forgot@helsinki.fi", "code": wrongCode, "password": "a new long secret"])
            #expect(wrong == .badRequest)
            #expect(
                try await client.post(
                    "/v1/auth/login", ["email": "forgot@helsinki.fi", "password": "correct horse battery"]
                ).0 == .ok)

            let (confirmed, _) = try await client.post(
                "/v1/auth/password-reset/confirm",
                ["email": "forgot@helsinki.fi", "code": code, "password": "a new long secret"])
            #expect(confirmed == .noContent)
            #expect(try await client.post("/v1/auth/refresh", ["refreshToken": refreshToken]).0 == .unauthorized)
            #expect(
                try await client.post(
                    "/v1/auth/login", ["email": "forgot@helsinki.fi", "password": "correct horse battery"]
                ).0 == .unauthorized)
            let (newLogin, session) = try await client.post(
                "/v1/auth/login", ["email": "forgot@helsinki.fi", "password": "a new long secret"])
            #expect(newLogin == .ok && (session["user"] as? [String: Any])?["emailVerified"] as? Bool == true)
            // The code is spent.
            #expect(
                try await client.post(
                    "/v1/auth/password-reset/confirm",
                    ["email": "forgot@helsinki.fi", "code": code, "password": "yet another secret"]
                ).0 == .badRequest)

            // An unknown address: the same answer, and no mail.
            let (unknown, _) = try await client.post("/v1/auth/password-reset", ["email": "ghost@helsinki.fi"])
            #expect(unknown == .accepted)
            #expect(try await app.mails(to: "ghost@helsinki.fi").isEmpty)
        }
    }

    @Test func theRelaySendsEveryMailOnceThroughFailuresWithTwoReplicas() async throws {
        let database = try await TestDatabase.make(
            migrations: [
                PostgresMigrator.messagingDirectory,
                TestService.repositoryRoot.appendingPathComponent("Services/Accounts/Migrations"),
            ])
        let repository = AccountPostgresRepository(database: database.pool)
        try await database.pool.transaction { connection in
            for index in 0..<20 {
                try AccountPostgresRepository.enqueue(
                    OutgoingMail(to: "r\(index)@helsinki.fi", subject: "S", body: "B"), on: connection)
            }
        }
        // The mail server refuses the first three mails it is given; they are tried again.
        let transport = FlakyTransport(failures: 3)
        let relays = (0..<2).map { _ in
            var relay = MailRelay(
                repository: repository, transport: transport, metrics: ServiceMetrics(),
                logger: TestEnvironment.logger)
            relay.interval = .milliseconds(50)
            return relay
        }
        try await runBriefly(relays) {
            // NB: a bound for failing, not a speed: at the parallel suite's peak a statement has taken seconds here.
            try await eventually("every mail sent", timeout: 300) {
                try await database.pool.query("SELECT 1 FROM mail_outbox WHERE sent_at IS NULL").isEmpty
            }
        }
        let sent = transport.sent.withLockedValue { $0 }
        #expect(sent.count == 20 && Set(sent).count == 20)
        let retried: Int = try await database.pool.query(
            "SELECT count(*) AS n FROM mail_outbox WHERE attempts > 1"
        ).first!.decode("n")
        #expect(retried == 3)
    }

    @Test func aMailIsPlainTextInUTF8WithItsSubjectEncodedBeyondASCII() {
        let mail = OutgoingMail(to: "aino@helsinki.fi", subject: "Hei Äiti", body: "Rivi yksi\nRivi kaksi")
        let text = String(decoding: mail.message(from: "Tarrare <noreply@tarrare.fi>", id: "x@tarrare"), as: UTF8.self)
        let (headers, body) = try! #require(
            text.range(of: "\r\n\r\n").map { (text[..<$0.lowerBound], text[$0.upperBound...]) })
        #expect(headers.contains("Subject: =?UTF-8?B?\(Data("Hei Äiti".utf8).base64EncodedString())?="))
        #expect(headers.contains("To: <aino@helsinki.fi>") && headers.contains("Message-ID: <x@tarrare>"))
        #expect(headers.contains("Content-Type: text/plain; charset=utf-8"))
        #expect(body == "Rivi yksi\r\nRivi kaksi\r\n")
    }

    @Test func smtpSettingsRefuseWhatCannotWorkAndRequireTLSAwayFromThisMachine() throws {
        func settings(_ values: [String: String]) throws -> SMTPSettings? {
            try SMTPSettings(EnvironmentReader(values: values))
        }
        #expect(try settings([:]) == nil)
        let remote = try #require(
            try settings(["SMTP_URL": "smtp://mailer:p%40ss@mail.example.org:587", "SMTP_FROM": "Tarrare <a@b.fi>"]))
        #expect(remote.requiresTLS && remote.user == "mailer" && remote.password == "p@ss")
        #expect(remote.url == "smtp://mail.example.org:587" && remote.fromAddress == "a@b.fi")
        #expect(try settings(["SMTP_URL": "smtp://127.0.0.1:2525", "SMTP_FROM": "a@b.fi"])?.requiresTLS == false)
        for (values, named) in [
            (["SMTP_URL": "http://mail.example.org", "SMTP_FROM": "a@b.fi"], "SMTP_URL"),
            (["SMTP_URL": "smtp://mail.example.org/x", "SMTP_FROM": "a@b.fi"], "SMTP_URL"),
            (["SMTP_URL": "smtp://mail.example.org"], "SMTP_FROM"),
            (["SMTP_URL": "smtp://mail.example.org", "SMTP_FROM": "nobody"], "SMTP_FROM"),
            (
                ["SMTP_URL": "smtp://mail.example.org", "SMTP_FROM": "a@b.fi", "SMTP_CA_FILE": "/nonexistent"],
                "SMTP_CA_FILE"
            ),
        ] {
            #expect {
                try settings(values)
            } throws: { "\($0)".contains(named) }
        }
    }
}

/// A mail server that refuses the first `failures` mails, then takes every one.
final class FlakyTransport: MailTransport {
    let sent = NIOLockedValueBox<[String]>([])
    private let failuresLeft: NIOLockedValueBox<Int>

    init(failures: Int) {
        failuresLeft = NIOLockedValueBox(failures)
    }

    struct Refused: Error {}

    func send(_ mail: OutgoingMail, id: String) async throws {
        let refuse = failuresLeft.withLockedValue { left in
            defer { left -= 1 }
            return left > 0
        }
        if refuse { throw Refused() }
        sent.withLockedValue { $0.append(mail.to) }
    }
}

extension AccountsTestApp {
    /// The mails in the outbox to `address`, oldest first.
    func mails(to address: String, subject: String? = nil) async throws -> [OutgoingMail] {
        try await service.database.pool.query(
            """
            SELECT recipient, subject, body FROM mail_outbox
            WHERE recipient = \(address) AND (\(subject)::text IS NULL OR subject = \(subject)) ORDER BY id
            """
        ).map {
            OutgoingMail(to: try $0.decode("recipient"), subject: try $0.decode("subject"), body: try $0.decode("body"))
        }
    }

    /// The newest mail to `address`; fails when there is none.
    func mail(to address: String, subject: String? = nil) async throws -> OutgoingMail {
        guard let mail = try await mails(to: address, subject: subject).last else {
            throw TestFailure("no mail to \(address)")
        }
        return mail
    }
}

extension OutgoingMail {
    /// The six digits after "Your code: ".
    func code() throws -> String {
        guard let range = body.range(of: "Your code: ") else { throw TestFailure("no code in \(body)") }
        let code = String(body[range.upperBound...].prefix(6))
        guard code.count == 6, code.allSatisfy(\.isNumber) else { throw TestFailure("no code in \(body)") }
        return code
    }
}
