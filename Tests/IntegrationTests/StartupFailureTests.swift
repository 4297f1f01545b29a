import Foundation
import ServiceKit
import TestSupport
import Testing

// NB: the limit guards against a hang, not a speed: with every suite starting at once, a test here has waited
// two and a half minutes for the cores.
/// A process that cannot start says why in one line and exits with status 1: no crash, no backtrace.
@Suite(.timeLimit(.minutes(5))) struct StartupFailureTests {
    static let unreachableDatabase = "postgres://nobody@127.0.0.1:1/none"

    /// Runs an executable with only `environment` and returns its status and what it wrote to standard error (or,
    /// with `standardOutput`, to standard output).
    func run(
        _ executable: String, _ arguments: [String] = [], environment: [String: String], standardOutput: Bool = false
    ) async throws -> (Int32, String) {
        try await ChildProcess.run(
            [RunningSystem.binaries.appendingPathComponent(executable).path] + arguments, environment: environment,
            capturing: standardOutput ? .standardOutput : .standardError)
    }

    @Test(arguments: ["places", "matching", "chat", "notifications"])
    func aServiceWithoutItsTokenKeyInProductionNamesIt(service: String) async throws {
        let (status, output) = try await run(
            service,
            environment: [
                "ENVIRONMENT": "production", "POSTGRES_URL": Self.unreachableDatabase,
                "AMQP_URL": "amqp://nobody@127.0.0.1:1/%2F",
            ])

        #expect(status == 1)
        #expect(output.split(separator: "\n").count == 1)
        #expect(output.contains("JWT_PUBLIC_KEY"))
        #expect(!output.contains("Fatal error"))
    }

    @Test func aServiceWhoseDatabaseIsOutOfReachNamesIt() async throws {
        let (status, output) = try await run(
            "chat", environment: ["POSTGRES_URL": Self.unreachableDatabase, "JWT_PUBLIC_KEY": "unused"])

        #expect(status == 1)
        #expect(output.split(separator: "\n").count == 1)
        #expect(output.contains("127.0.0.1") && output.contains("chat:"))
        #expect(!output.contains("Fatal error"))
    }

    @Test func anImportWhoseDatabaseIsOutOfReachNamesIt() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID()).geojson")
        try Data(#"{"type":"FeatureCollection","features":[]}"#.utf8).write(to: file)

        let (status, output) = try await run(
            "places", ["import", file.path], environment: ["POSTGRES_URL": Self.unreachableDatabase])

        #expect(status == 1)
        #expect(output.split(separator: "\n").count == 1)
        #expect(output.hasPrefix("places import:") && output.contains("127.0.0.1"))
        #expect(!output.contains("Fatal error"))
    }

    @Test func importHelpPrintsItsUsageWithoutConnectingAnywhere() async throws {
        let (status, output) = try await run(
            "places", ["import", "--help"], environment: ["POSTGRES_URL": Self.unreachableDatabase],
            standardOutput: true)

        #expect(status == 0)
        #expect(output.contains("USAGE: places import") && output.contains("--retire-many"))
    }
}
