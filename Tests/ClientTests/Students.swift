import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import TarrareClient
import Testing

/// The running system the client tests talk to: its gateway (TARRARE_GATEWAY, as the system tests take it) and, when
/// it asks sign-ups to prove their address, the tests' mail server's inbox (TARRARE_MAIL_DIR).
enum System {
    static let gateway = URL(string: ProcessInfo.processInfo.environment["TARRARE_GATEWAY"] ?? "http://127.0.0.1:8080")!
    static let mailDirectory = ProcessInfo.processInfo.environment["TARRARE_MAIL_DIR"]
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A student signed up through the package alone, their address proved with the code mailed when the system asks.
    static func student(_ name: String, tokens: any TokenStore = MemoryTokenStore()) async throws -> TarrareClient {
        let client = TarrareClient(serverURL: gateway, tokens: tokens)
        let email = "\(name.lowercased()).\(UUID().uuidString.prefix(10).lowercased())@helsinki.fi"
        let password = "correct horse battery"
        if try await client.signUp(email: email, password: password, name: name) == .verificationRequired {
            let code: String = try await eventually("the code mailed to \(email)") { try Self.code(mailedTo: email) }
            try await client.verify(email: email, code: code)
            try await client.logIn(email: email, password: password)
        }
        #expect(await client.session.isSignedIn)
        return client
    }

    /// Restarts one service of the system as scripts/up restarts it, as it was built.
    static func restart(_ service: String) async throws {
        // NB: not with Foundation's Process, which waits for its pipes to close: the service scripts/up starts in the
        // background would hold them open. No build: this test's SwiftPM holds .build.
        let environment = ProcessInfo.processInfo.environment.merging(["BUILD": "false"]) { $1 }
        let status = try await Task.detached {
            let words = [root.appendingPathComponent("scripts/up").path, service]
            let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
            let variables: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0)=\($1)") } + [nil]
            defer { for pointer in arguments + variables { free(pointer) } }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            var pid = pid_t()
            let spawned = posix_spawn(&pid, arguments[0]!, &actions, nil, arguments, variables)
            guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL) }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            return status
        }.value
        #expect(status == 0, "scripts/up \(service) failed")
    }

    /// The newest "Your code: NNNNNN" of the mail to `address` in the tests' inbox.
    static func code(mailedTo address: String) throws -> String? {
        guard let mailDirectory else { return nil }
        let files = try FileManager.default.contentsOfDirectory(atPath: mailDirectory).filter { $0.hasSuffix(".eml") }
            .sorted().reversed()
        for file in files {
            let text = try String(contentsOfFile: "\(mailDirectory)/\(file)", encoding: .utf8)
            guard text.lowercased().contains(address.lowercased()),
                let match = text.firstMatch(of: /Your code: (\d{6})\b/)
            else { continue }
            return String(match.1)
        }
        return nil
    }
}

/// Calls `attempt` until it returns a value, for `seconds`; fails naming `what` when none came.
func eventually<T>(
    _ what: String, seconds: Double = 30, _ attempt: () async throws -> T?
) async throws -> T {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if let value = try await attempt() { return value }
        guard Date() < deadline else { throw WaitedTooLong(what: what) }
        try await Task.sleep(for: .milliseconds(100))
    }
}

struct WaitedTooLong: Error, CustomStringConvertible {
    var what: String
    var description: String { "waited too long for \(what)" }
}

/// Repeats a call that answers 404 until the other services' events have made its subject known (a new student is
/// unknown to matching for a moment).
func whenKnown<T>(_ what: String, _ call: () async throws -> T) async throws -> T {
    try await eventually(what) {
        do {
            return try await call()
        } catch let error where TarrareClient.problem(of: error)?.status == 404 {
            return nil
        }
    }
}

/// What a feed yields, gathered by a task of its own, with its states.
final class FeedRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [FeedEvent] = []
    private var task: Task<Void, Never>?

    init(_ feed: Feed) {
        task = Task { [weak self] in
            do {
                for try await event in feed { self?.append(event) }
            } catch {
                self?.append(.frame(type: "error", data: Data("\(error)".utf8)))
            }
        }
    }

    private func append(_ event: FeedEvent) { lock.withLock { events.append(event) } }

    var all: [FeedEvent] { lock.withLock { events } }

    var entries: [FeedEntry] {
        all.compactMap { if case .entry(let entry) = $0 { entry } else { nil } }
    }

    var states: [FeedState] {
        all.compactMap { if case .state(let state) = $0 { state } else { nil } }
    }

    /// The first entry of `type` whose data holds `value` at `key`, waiting for it.
    func entry(_ type: String, where key: String, is value: String, seconds: Double = 30) async throws -> FeedEntry {
        try await eventually("\(type) with \(key) \(value)", seconds: seconds) {
            entries.first { entry in
                guard entry.type == type, var found = try? JSONSerialization.jsonObject(with: entry.data) else {
                    return false
                }
                // NB: "match.matchId" names matchId inside match.
                for part in key.split(separator: ".") {
                    guard let next = (found as? [String: Any])?[String(part)] else { return false }
                    found = next
                }
                return (found as? String)?.lowercased() == value.lowercased()
            }
        }
    }

    func stop() { task?.cancel() }
}

/// URLSession's transport, counting the requests to each path.
final class CountingTransport: ClientTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private let transport = URLSessionTransport()

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (
        HTTPResponse, HTTPBody?
    ) {
        lock.withLock { counts[request.path ?? "", default: 0] += 1 }
        return try await transport.send(request, body: body, baseURL: baseURL, operationID: operationID)
    }

    func count(of path: String) -> Int { lock.withLock { counts[path] ?? 0 } }
}

/// How many times a session said it ended.
final class SignedOut: @unchecked Sendable {
    private let lock = NSLock()
    private var times = 0
    func happened() { lock.withLock { times += 1 } }
    var count: Int { lock.withLock { times } }
}
