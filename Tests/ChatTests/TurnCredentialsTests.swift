import Foundation
import ServiceKit
import TestSupport
import Testing

@testable import Chat

/// The TURN credentials chat signs, against Debian's coturn with the same shared secret: an allocation with them
/// relays, one signed with another secret is refused.
@Suite struct TurnCredentialsTests {
    @Test func theCredentialsAreCoturnsSchemeAndLastAnHour() throws {
        let settings = try TurnSettings(
            EnvironmentReader(values: ["TURN_URLS": "turn:127.0.0.1:3478?transport=udp", "TURN_SECRET": "s"]))
        let userId = UUID()
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let servers = settings.iceServers(for: userId, now: now)
        #expect(servers.ttl == 3600)
        let server = try #require(servers.iceServers.first)
        #expect(server.urls == ["turn:127.0.0.1:3478?transport=udp"])
        #expect(server.username == "1800003600:\(userId.uuidString.lowercased())")
        // base64(HMAC-SHA1("s", username)), as coturn computes it.
        #expect(Data(base64Encoded: server.credential)?.count == 20)
        #expect(throws: ConfigurationError.self) {
            try TurnSettings(EnvironmentReader(values: ["TURN_URLS": "turn:127.0.0.1:3478"]))
        }
        #expect(throws: ConfigurationError.self) {
            try TurnSettings(EnvironmentReader(values: ["TURN_URLS": "http://127.0.0.1", "TURN_SECRET": "s"]))
        }
    }

    @Test func aSecretFileSignsAsItsSecretWithoutTheLineEnd() throws {
        // As deploy/make-secrets.sh writes it, and as coturn's configuration takes it (without the newline).
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("turn-secret-\(UUID().uuidString)")
        try "s3cret\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try TurnSettings(
            EnvironmentReader(values: ["TURN_URLS": "turn:127.0.0.1:3478", "TURN_SECRET_FILE": file.path]))
        let fromValue = try TurnSettings(
            EnvironmentReader(values: ["TURN_URLS": "turn:127.0.0.1:3478", "TURN_SECRET": "s3cret"]))
        let userId = UUID()
        let now = Date()
        #expect(fromFile.iceServers(for: userId, now: now) == fromValue.iceServers(for: userId, now: now))
    }

    @Test func coturnRelaysWithTheCredentialsAndRefusesAnotherSecretsOnes() async throws {
        let secret = UUID().uuidString
        // NB: below the kernel's ephemeral ports (32768 on), and apart from RabbitMQ's (25672) and scripts/up's.
        let port = Int.random(in: 21_000...24_999)
        let relayPorts = Int.random(in: 30_000...32_600)
        let server = try ChildProcess([
            "turnserver", "-n", "--listening-ip=127.0.0.1", "--listening-port=\(port)", "--relay-ip=127.0.0.1",
            "--min-port=\(relayPorts)", "--max-port=\(relayPorts + 20)", "--use-auth-secret",
            "--static-auth-secret=\(secret)", "--realm=tarrare", "--no-tls", "--no-dtls", "--no-cli",
            "--allow-loopback-peers", "--log-file=stdout",
        ])
        // NB: coturn does not stop on SIGTERM.
        defer {
            server.signal(SIGKILL)
            _ = server.waitUntilExit()
        }
        // NB: a binding request sent before coturn listens is lost, and the client waits for its answer forever.
        try await eventually("coturn answers on port \(port)") {
            try await ChildProcess.run([
                "timeout", "-s", "KILL", "2", "turnutils_stunclient", "-p", "\(port)", "127.0.0.1",
            ])
            .status == 0
        }

        for (signingSecret, relays) in [(secret, true), ("another secret", false)] {
            let settings = try TurnSettings(
                EnvironmentReader(values: ["TURN_URLS": "turn:127.0.0.1:\(port)", "TURN_SECRET": signingSecret]))
            let credentials = try #require(settings.iceServers(for: UUID()).iceServers.first)
            // An allocation, a permission and a few messages relayed to a peer of its own, over UDP.
            let (status, output) = try await ChildProcess.run([
                "timeout", "-s", "KILL", "20", "turnutils_uclient", "-p", "\(port)", "-u", credentials.username, "-w",
                credentials.credential, "-y",
                "-n", "2", "-m", "1", "-l", "100", "127.0.0.1",
            ])
            #expect((status == 0) == relays, "signed with \(signingSecret): exit \(status)")
            #expect(status != 137, "turnutils_uclient took more than 20 s")
            // NB: the client exits 0 when every packet was lost too.
            if relays { #expect(output.contains("Total lost packets 0 "), "\(output.suffix(1500))") }
        }
    }
}
