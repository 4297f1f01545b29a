import Foundation
import Logging

/// One email accounts sends: plain text to one address. It waits in the mail outbox until `MailRelay` hands it to a
/// transport.
struct OutgoingMail: Sendable, Equatable {
    var to: String
    var subject: String
    var body: String

    /// The message as SMTP carries it (RFC 5322): headers, a blank line and the body, in UTF-8 with CRLF line ends.
    /// A subject beyond ASCII is an encoded word (RFC 2047); the body is 8-bit text, which every server now takes.
    func message(from sender: String, date: Date = Date(), id: String) -> Data {
        let headers = [
            "From: \(sender)",
            "To: <\(to)>",
            "Subject: \(Self.encodedWord(subject))",
            "Date: \(Self.dateFormatter.string(from: date))",
            "Message-ID: <\(id)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: 8bit",
        ]
        let lines = body.replacingOccurrences(of: "\r\n", with: "\n").split(
            separator: "\n", omittingEmptySubsequences: false)
        return Data((headers.joined(separator: "\r\n") + "\r\n\r\n" + lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    private static func encodedWord(_ text: String) -> String {
        if text.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 }) { return text }
        return "=?UTF-8?B?\(Data(text.utf8).base64EncodedString())?="
    }

    private static let dateFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter
    }()
}

/// What hands a mail to the world: SMTP when configured, the log otherwise.
protocol MailTransport: Sendable {
    /// Sends the mail or throws; a throw is tried again later, so the mail must not have gone.
    func send(_ mail: OutgoingMail, id: String) async throws
}

/// Writes the mail to the log instead of sending it: the default for a local run without SMTP.
struct LogMailTransport: MailTransport {
    let logger: Logger

    func send(_ mail: OutgoingMail, id: String) async throws {
        logger.notice("mail", metadata: ["to": "\(mail.to)", "subject": "\(mail.subject)", "body": "\(mail.body)"])
    }
}

/// The mails accounts writes, a person can read.
enum AccountMails {
    /// The code that proves `email` is the person's, and the link that carries it to the web client.
    static func verification(to email: String, name: String, code: String, campus: String, publicURL: String)
        -> OutgoingMail
    {
        OutgoingMail(
            to: email, subject: "Confirm your email for Tarrare",
            body: """
                Hello \(name),

                Someone, probably you, signed up for Tarrare at \(campus) with this address.

                Your code: \(code)

                Or open this link to confirm it:
                \(publicURL)/#/verify/\(percentEncoded(email))/\(code)

                The code is valid for 15 minutes. If it was not you, ignore this email: nothing happens without the
                code.
                """)
    }

    /// The code that sets a new password.
    static func passwordReset(to email: String, name: String, code: String) -> OutgoingMail {
        OutgoingMail(
            to: email, subject: "Reset your Tarrare password",
            body: """
                Hello \(name),

                Someone, probably you, asked to reset the password of the Tarrare account of this address.

                Your code: \(code)

                Enter it with a new password on the "Reset your password" screen. The code is valid for 15 minutes.
                If it was not you, ignore this email: your password stays as it is.
                """)
    }

    private static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~")))
            ?? text
    }
}
