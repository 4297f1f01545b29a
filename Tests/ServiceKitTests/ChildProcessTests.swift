import Foundation
import Testing

@testable import ServiceKit

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct ChildProcessTests {
    @Test func aProgramsStatusAndTheStreamsAskedForAreReturned() async throws {
        let script = "echo out; echo err >&2; exit 3"
        let both = try await ChildProcess.run(["sh", "-c", script])
        #expect(both.status == 3)
        #expect(both.output.split(separator: "\n").sorted() == ["err", "out"])
        #expect(try await ChildProcess.run(["sh", "-c", script], capturing: .standardOutput).output == "out\n")
        #expect(try await ChildProcess.run(["sh", "-c", script], capturing: .standardError).output == "err\n")
    }

    @Test func theEnvironmentGivenIsTheWholeOfIt() async throws {
        let answer = try await ChildProcess.run(["/usr/bin/env"], environment: ["ONLY": "this"])
        #expect(answer.output == "ONLY=this\n")
    }

    @Test func aProgramEndedBySignalHas128AndItsNumber() async throws {
        let process = try ChildProcess(["sleep", "600"])
        process.signal(SIGKILL)
        #expect(await process.exitStatus() == 128 + SIGKILL)
    }

    @Test func noDescriptorOfTheCallerReachesTheProgram() async throws {
        // NB: without close-on-exec, as a descriptor a C library opened may be; numbered above any the shell and
        // `ls` open.
        let opened = open("/dev/null", O_RDONLY)
        let descriptor = fcntl(opened, F_DUPFD, 500)
        close(opened)
        defer { close(descriptor) }
        try #require(descriptor >= 500)
        let listed = try await ChildProcess.run(["sh", "-c", "ls /proc/self/fd"]).output
        #expect(listed.split(separator: "\n").contains("0"))
        #expect(!listed.split(separator: "\n").contains(Substring(String(descriptor))))
    }

    @Test func aProgramThatIsNotThereIsAnError() async throws {
        await #expect(throws: ChildProcessError.self) {
            try await ChildProcess.run(["no-such-program-\(UUID().uuidString)"])
        }
    }
}
