import Foundation
import Testing
import TestSupport

/// A process that cannot start says why in one line and exits with status 1: no crash, no backtrace.
@Suite(.timeLimit(.minutes(2))) struct StartupFailureTests {
    /// Runs an executable with only `environment` and returns its status and what it wrote to standard error.
    func run(_ executable: String, _ arguments: [String] = [], environment: [String: String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = RunningSystem.binaries.appendingPathComponent(executable)
        process.arguments = arguments
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let output = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    @Test(arguments: ["matching", "chat", "notifications"])
    func aServiceWithoutItsTokenKeyInProductionNamesIt(service: String) throws {
        let (status, output) = try run(
            service,
            environment: [
                "ENVIRONMENT": "production", "POSTGRES_URL": "postgres://nobody@127.0.0.1:1/none",
                "AMQP_URL": "amqp://nobody@127.0.0.1:1/%2F",
            ])

        #expect(status == 1)
        #expect(output.split(separator: "\n").count == 1)
        #expect(output.contains("JWT_PUBLIC_KEY"))
        #expect(!output.contains("Fatal error"))
    }

    @Test func aServiceWhoseDatabaseIsOutOfReachNamesIt() throws {
        let (status, output) = try run(
            "chat", environment: ["POSTGRES_URL": "postgres://nobody@127.0.0.1:1/none", "JWT_PUBLIC_KEY": "unused"])

        #expect(status == 1)
        #expect(output.split(separator: "\n").count == 1)
        #expect(output.contains("127.0.0.1") && output.contains("chat:"))
        #expect(!output.contains("Fatal error"))
    }
}
