import Foundation
import HummingbirdTesting
import ServiceKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A RabbitMQ virtual host of its own for one test, and the broker operations tests need.
public struct TestBroker: Sendable {
    public let vhost: String
    public let url: String

    /// Makes the vhost through RabbitMQ's HTTP API (a request takes milliseconds; rabbitmqctl starts an Erlang node
    /// of its own each time, which many tests starting at once cannot afford on two cores).
    public static func make() async throws -> TestBroker {
        _ = sweep
        let vhost = "test-\(Templates.started)-\(UUID().uuidString.lowercased().prefix(8))"
        let user = URLComponents(string: TestEnvironment.amqpURL)?.user ?? "tarrare_admin"
        try await api("PUT", "vhosts/\(vhost)")
        try await api("PUT", "permissions/\(vhost)/\(user)", body: #"{"configure":".*","write":".*","read":".*"}"#)
        return TestBroker(vhost: vhost, url: TestEnvironment.replacingPath(of: TestEnvironment.amqpURL, with: vhost))
    }

    /// Ready messages per queue in this vhost.
    public func messageCounts() async throws -> [String: Int] {
        let output = try await Self.rabbitmqctl([
            "list_queues", "-p", vhost, "--quiet", "--no-table-headers", "name", "messages",
        ])
        var counts: [String: Int] = [:]
        for line in output.split(separator: "\n") {
            let fields = line.split(whereSeparator: \.isWhitespace)
            if fields.count == 2, let count = Int(fields[1]) { counts[String(fields[0])] = count }
        }
        return counts
    }

    /// The routing keys bound from each exchange to each queue of this vhost, as `exchange -> queue: key`.
    public func bindings() async throws -> Set<String> {
        let output = try await Self.rabbitmqctl(
            [
                "list_bindings", "-p", vhost, "--quiet", "--no-table-headers", "source_name", "destination_name",
                "routing_key",
            ])
        return Set(
            output.split(separator: "\n").compactMap { line in
                let fields = line.split(whereSeparator: \.isWhitespace)
                return fields.count == 3 ? "\(fields[0]) -> \(fields[1]): \(fields[2])" : nil
            })
    }

    /// Closes every client connection of this vhost, as a broker restart or network cut would.
    public func closeAllConnections() async throws {
        try await Self.rabbitmqctl(["close_all_connections", "--vhost", vhost, "test: connections closed on purpose"])
    }

    /// Drops the ready messages of `queue`, as a consumer that caught up would have taken them.
    public func purge(_ queue: String) async throws {
        try await Self.api("DELETE", "queues/\(vhost)/\(queue)/contents")
    }

    /// Puts `count` messages into `queue` through the default exchange, as a producer would.
    public func publish(_ count: Int, to queue: String) async throws {
        for _ in 0..<count {
            try await Self.api(
                "POST", "exchanges/\(vhost)/amq.default/publish",
                body: #"{"properties":{},"routing_key":"\#(queue)","payload":"{}","payload_encoding":"string"}"#)
        }
    }

    public func delete() async throws {
        try await Self.api("DELETE", "vhosts/\(vhost)")
    }

    /// Deletes, in the background and once a process, the vhosts that runs started over an hour ago left behind: a test
    /// that fails leaves its own, and many tests never delete theirs (some eighty a whole run). Each keeps processes
    /// and timers that work while the broker idles: 326 of them made the broker's CPU a chat message a third of a
    /// millisecond more at 200 a second. Names without a start time are from before names had one. What the process
    /// does not get to before it ends, the next run deletes.
    private static let sweep: Void = {
        let cutoff = Templates.leftoversBefore
        Task.detached(priority: .background) {
            guard let data = try? await api("GET", "vhosts?columns=name"),
                let vhosts = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]]
            else { return }
            for name in vhosts.compactMap({ $0["name"] as? String }) {
                // NB: `test-<started>-<8 hex>`, or from before: `test-<8 hex>-<4 hex>`.
                let parts = name.split(separator: "-")
                guard parts.count == 3, parts[0] == "test" else { continue }
                if parts[2].count == 4 || (Int(parts[1]) ?? .max) < cutoff {
                    _ = try? await api("DELETE", "vhosts/\(name)")
                }
            }
        }
    }()

    /// A request to RabbitMQ's HTTP API (`TEST_RABBITMQ_API`) as the user of `TEST_AMQP_URL`; its answer's body.
    @discardableResult
    static func api(_ method: String, _ path: String, body: String? = nil) async throws -> Data {
        var request = URLRequest(url: URL(string: "\(TestEnvironment.rabbitmqAPI)/\(path)")!)
        request.httpMethod = method
        let amqp = URLComponents(string: TestEnvironment.amqpURL)
        let credentials = "\(amqp?.user ?? "tarrare_admin"):\(amqp?.password ?? "")"
        request.setValue("Basic \(Data(credentials.utf8).base64EncodedString())", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.utf8)
        }
        let (data, response) = try await APIRequests.shared.send(request)
        guard let status = (response as? HTTPURLResponse)?.statusCode, (200..<300).contains(status) else {
            throw TestFailure(
                "RabbitMQ's HTTP API answered \(method) \(path) with \((response as? HTTPURLResponse)?.statusCode ?? 0): "
                    + String(decoding: data, as: UTF8.self))
        }
        return data
    }

    /// Runs rabbitmqctl without blocking a thread of the concurrency pool (each call takes about a second).
    /// NB: with many tests starting at once, the command's own Erlang node sometimes fails to start ("Distribution
    /// failed") before it reaches the broker; that attempt did nothing, so it is made again.
    @discardableResult
    static func rabbitmqctl(_ arguments: [String]) async throws -> String {
        var attempts = 1
        while true {
            let (status, text) = try await ChildProcess.run([TestEnvironment.rabbitmqctl] + arguments)
            if status == 0 { return text }
            guard text.contains("Distribution failed"), attempts < 4 else {
                throw TestFailure("rabbitmqctl \(arguments.joined(separator: " ")) failed: \(text)")
            }
            attempts += 1
            try await Task.sleep(for: .milliseconds(Int.random(in: 200...1000)))
        }
    }
}

extension TestClientProtocol {
    /// How many events the service under test has taken from its `queue` and acknowledged (applied, or found
    /// applied already), as its `/metrics` says.
    public func consumedEvents(from queue: String) async throws -> Int {
        let metrics = try await execute(uri: "/metrics", method: .get) {
            String(decoding: $0.body.readableBytesView, as: UTF8.self)
        }
        let prefix = #"events_consumed_total{queue="\#(queue)"} "#
        let line = metrics.split(separator: "\n").first { $0.hasPrefix(prefix) }
        return line.flatMap { Int($0.dropFirst(prefix.count)) } ?? 0
    }
}

/// The requests to RabbitMQ's HTTP API, a few at a time. Every test makes a vhost as it starts, and hundreds start at
/// once: a URLSession queues what it cannot send yet and counts that wait against the request's timeout, so at the
/// suite's start a queued request timed out before it was sent. Here the wait is in this queue, the timeout counts
/// only the request itself, and a PUT or DELETE that times out is made again (both are idempotent).
actor APIRequests {
    static let shared = APIRequests()

    private let session: URLSession
    private let limit = 4
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    private init() {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 60
        configuration.httpMaximumConnectionsPerHost = limit
        session = URLSession(configuration: configuration)
    }

    func send(_ request: URLRequest) async throws -> (Data, URLResponse) {
        if running < limit {
            running += 1
        } else {
            await withCheckedContinuation { waiting.append($0) }
        }
        defer {
            if waiting.isEmpty { running -= 1 } else { waiting.removeFirst().resume() }
        }
        var attempt = 1
        while true {
            do {
                return try await session.data(for: request)
            } catch let error as URLError
                where error.code == .timedOut && request.httpMethod != "POST" && attempt < 3
            {
                attempt += 1
            }
        }
    }
}

/// A failure of the test set-up itself.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Polls `condition` every 50 ms until it holds; throws, naming `what` it waited for, once `timeout` seconds pass
/// without it.
public func eventually(_ what: String, timeout: Double = 20, _ condition: () async throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    if try await condition() { return }
    throw TestFailure("waited \(timeout) s for \(what)")
}
