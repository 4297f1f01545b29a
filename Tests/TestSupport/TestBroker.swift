import Foundation

/// A RabbitMQ virtual host of its own for one test, and the broker operations tests need.
public struct TestBroker: Sendable {
    public let vhost: String
    public let url: String

    public static func make() async throws -> TestBroker {
        let vhost = "test-\(UUID().uuidString.lowercased().prefix(13))"
        let user = URLComponents(string: TestEnvironment.amqpURL)?.user ?? "tarrare_admin"
        try await rabbitmqctl(["add_vhost", vhost])
        try await rabbitmqctl(["set_permissions", "-p", vhost, user, ".*", ".*", ".*"])
        return TestBroker(vhost: vhost, url: TestEnvironment.replacingPath(of: TestEnvironment.amqpURL, with: vhost))
    }

    /// Ready messages per queue in this vhost.
    public func messageCounts() async throws -> [String: Int] {
        let output = try await Self.rabbitmqctl(["list_queues", "-p", vhost, "--quiet", "--no-table-headers", "name", "messages"])
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
            ["list_bindings", "-p", vhost, "--quiet", "--no-table-headers", "source_name", "destination_name", "routing_key"])
        return Set(output.split(separator: "\n").compactMap { line in
            let fields = line.split(whereSeparator: \.isWhitespace)
            return fields.count == 3 ? "\(fields[0]) -> \(fields[1]): \(fields[2])" : nil
        })
    }

    /// Closes every client connection of this vhost, as a broker restart or network cut would.
    public func closeAllConnections() async throws {
        try await Self.rabbitmqctl(["close_all_connections", "--vhost", vhost, "test: connections closed on purpose"])
    }

    public func delete() async throws {
        try await Self.rabbitmqctl(["delete_vhost", vhost])
    }

    /// Runs rabbitmqctl without blocking a thread of the concurrency pool (each call takes about a second).
    /// NB: with many tests starting at once, the command's own Erlang node sometimes fails to start ("Distribution
    /// failed") before it reaches the broker; that attempt did nothing, so it is made again.
    @discardableResult
    static func rabbitmqctl(_ arguments: [String]) async throws -> String {
        var attempts = 1
        while true {
            let (status, text) = try await runRabbitmqctl(arguments)
            if status == 0 { return text }
            guard text.contains("Distribution failed"), attempts < 4 else {
                throw TestFailure("rabbitmqctl \(arguments.joined(separator: " ")) failed: \(text)")
            }
            attempts += 1
            try await Task.sleep(for: .milliseconds(Int.random(in: 200...1000)))
        }
    }

    private static func runRabbitmqctl(_ arguments: [String]) async throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [TestEnvironment.rabbitmqctl] + arguments
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("rabbitmqctl-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        try handle.close()
        return (status, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }
}

/// A failure of the test set-up itself.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Polls `condition` every 50 ms until it holds or `timeout` seconds pass; returns whether it held.
public func eventually(timeout: Double = 20, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}
