import CCurl
import Foundation
import NIOPosix
import ServiceKit

/// Where mail goes: `SMTP_URL` (`smtp://user:password@host:587`, with STARTTLS required; `smtps://host:465`, TLS from
/// the start; plain SMTP only to a loopback address), `SMTP_FROM`, and `SMTP_CA_FILE` for a server whose certificate
/// no public authority signed.
struct SMTPSettings: Sendable, Equatable {
    var url: String
    var host: String
    var user: String?
    var password: String?
    var from: String
    /// The bare address of `from`, for the envelope.
    var fromAddress: String
    var caFile: String?

    /// nil when no `SMTP_URL` is set; throws, naming the variable, when the settings cannot work.
    init?(_ reader: EnvironmentReader) throws {
        guard let text = try reader.fileOrValue("SMTP_URL")?.trimmingCharacters(in: .whitespacesAndNewlines),
            !text.isEmpty
        else { return nil }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "smtp" || scheme == "smtps", let host = components.host, !host.isEmpty
        else {
            throw ConfigurationError.invalid("SMTP_URL", "expected smtp://[user:password@]host[:port] or smtps://…")
        }
        guard components.path.isEmpty || components.path == "/", components.query == nil else {
            throw ConfigurationError.invalid("SMTP_URL", "takes no path or query")
        }
        var bare = components
        (bare.user, bare.password) = (nil, nil)
        url = bare.string ?? text
        self.host = host
        user = components.user?.removingPercentEncoding
        password = components.password?.removingPercentEncoding
        guard let from = reader.string("SMTP_FROM") else {
            throw ConfigurationError.invalid("SMTP_FROM", "must be set with SMTP_URL: the address mail comes from")
        }
        guard let address = Self.address(in: from) else {
            throw ConfigurationError.invalid("SMTP_FROM", "expected an address, or a name and <address>")
        }
        self.from = from
        fromAddress = address
        caFile = reader.string("SMTP_CA_FILE")
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ConfigurationError.invalid("SMTP_CA_FILE", "cannot read \(caFile)")
        }
    }

    /// Only a server on this machine may be spoken to without TLS: elsewhere the password and the codes would cross
    /// the network in the clear.
    var requiresTLS: Bool {
        !(["localhost", "127.0.0.1", "::1", "[::1]"].contains(host.lowercased()) || host.hasPrefix("127."))
    }

    /// The address of `Name <address>` or of a bare address.
    private static func address(in text: String) -> String? {
        let address: Substring
        if let open = text.lastIndex(of: "<"), let close = text.lastIndex(of: ">"), open < close {
            address = text[text.index(after: open)..<close]
        } else {
            address = Substring(text)
        }
        let trimmed = address.trimmingCharacters(in: .whitespaces)
        guard trimmed.contains("@"), !trimmed.contains(where: { $0.isWhitespace || $0 == "<" || $0 == ">" }) else {
            return nil
        }
        return trimmed
    }
}

/// Sends mail over SMTP with libcurl, which speaks the protocol, STARTTLS and AUTH. Its calls block, so they run on
/// a thread pool of their own, never on the event loop.
struct SMTPTransport: MailTransport {
    let settings: SMTPSettings
    let threads: NIOThreadPool
    /// How long one mail may take from connecting to the server's last answer.
    var timeoutSeconds = 30

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(settings: SMTPSettings, threads: NIOThreadPool) {
        self.settings = settings
        self.threads = threads
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }

    func send(_ mail: OutgoingMail, id: String) async throws {
        let message = mail.message(from: settings.from, id: id)
        try await threads.runIfActive { try self.sendBlocking(message, to: mail.to) }
    }

    private func sendBlocking(_ message: Data, to recipient: String) throws {
        guard let handle = curl_easy_init() else { throw Failure(description: "libcurl could not start") }
        defer { curl_easy_cleanup(handle) }
        var recipients: UnsafeMutablePointer<curl_slist>? = nil
        defer { curl_slist_free_all(recipients) }
        recipients = curl_slist_append(recipients, "<\(recipient)>")
        let source = MessageSource(message)
        var error = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)

        let code: CURLcode = error.withUnsafeMutableBufferPointer { errorBuffer in
            withExtendedLifetime(source) {
                let strings: [(CURLoption, String?)] = [
                    (CURLOPT_URL, settings.url), (CURLOPT_USERNAME, settings.user),
                    (CURLOPT_PASSWORD, settings.password), (CURLOPT_MAIL_FROM, "<\(settings.fromAddress)>"),
                    (CURLOPT_CAINFO, settings.caFile), (CURLOPT_PROTOCOLS_STR, "smtp,smtps"),
                ]
                for case (let option, let value?) in strings {
                    let set = value.withCString { tarrare_curl_set_pointer(handle, option, $0) }
                    guard set == CURLE_OK else { return set }
                }
                let longs: [(CURLoption, Int)] = [
                    (CURLOPT_USE_SSL, Int(settings.requiresTLS ? CURLUSESSL_ALL.rawValue : CURLUSESSL_TRY.rawValue)),
                    (CURLOPT_UPLOAD, 1), (CURLOPT_INFILESIZE_LARGE, source.data.count),
                    (CURLOPT_TIMEOUT, timeoutSeconds), (CURLOPT_CONNECTTIMEOUT, 10), (CURLOPT_NOSIGNAL, 1),
                ]
                for (option, value) in longs {
                    let set = tarrare_curl_set_long(handle, option, value)
                    guard set == CURLE_OK else { return set }
                }
                for (option, pointer) in [
                    (CURLOPT_MAIL_RCPT, UnsafeRawPointer(recipients)),
                    (CURLOPT_READDATA, UnsafeRawPointer(Unmanaged.passUnretained(source).toOpaque())),
                    (CURLOPT_ERRORBUFFER, UnsafeRawPointer(errorBuffer.baseAddress)),
                ] {
                    let set = tarrare_curl_set_pointer(handle, option, pointer)
                    guard set == CURLE_OK else { return set }
                }
                let set = tarrare_curl_set_read_function(handle) { buffer, size, count, context in
                    guard let buffer, let context else { return 0 }
                    return Unmanaged<MessageSource>.fromOpaque(context).takeUnretainedValue()
                        .read(into: buffer, capacity: size * count)
                }
                guard set == CURLE_OK else { return set }
                return curl_easy_perform(handle)
            }
        }
        guard code == CURLE_OK else {
            let detail = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw Failure(description: detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail)
        }
    }
}

/// The message libcurl reads as it uploads it.
private final class MessageSource {
    let data: Data
    private var offset = 0

    init(_ data: Data) {
        self.data = data
    }

    func read(into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        let count = min(capacity, data.count - offset)
        guard count > 0 else { return 0 }
        data.withUnsafeBytes { bytes in
            UnsafeMutableRawPointer(buffer).copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }
}
