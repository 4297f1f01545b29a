import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A program started with `posix_spawn`: its own signal dispositions and mask, none of this process's descriptors, and
/// its standard output and error in files or nowhere.
///
/// NB: not Foundation's `Process`, whose `run()` on Linux copies each entry of /proc/self/fd 256 bytes at a time;
/// now and then that copy reads past the end of glibc's buffer into an unmapped page and the caller crashes
/// (swift-corelibs-foundation #5472, fixed after the toolchain here).
package struct ChildProcess: Sendable {
    /// Where a standard stream goes.
    package enum Stream: Sendable, Equatable {
        case discarded
        /// Into the file at the path, created or emptied.
        case file(String)
        /// Into the file at the path, after what it holds.
        case appended(String)
    }

    package let id: pid_t

    /// Starts `arguments[0]` (a path, or a name looked for on PATH) with the rest as its arguments, and `environment`
    /// (this process's when nil). A stream given the same file as standard output shares it.
    package init(
        _ arguments: [String], environment: [String: String]? = nil, standardOutput: Stream = .discarded,
        standardError: Stream = .discarded
    ) throws {
        precondition(!arguments.isEmpty, "a program to run")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        Self.open(standardOutput, as: 1, in: &actions)
        if standardError == standardOutput {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            Self.open(standardError, as: 2, in: &actions)
        }
        _ = Self.closeFrom?(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var everySignal = sigset_t()
        sigfillset(&everySignal)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)
        var noSignal = sigset_t()
        sigemptyset(&noSignal)
        posix_spawnattr_setsigmask(&attributes, &noSignal)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for string in argv + envp { free(string) }
        }
        var id = pid_t()
        let failure = posix_spawnp(&id, arguments[0], &actions, &attributes, argv, envp)
        guard failure == 0 else {
            throw ChildProcessError("cannot run \(arguments[0]): \(String(cString: strerror(failure)))")
        }
        self.id = id
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc module does not declare.
    private static let closeFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast(
            $0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }

    private static func open(_ stream: Stream, as descriptor: Int32, in actions: inout posix_spawn_file_actions_t) {
        switch stream {
        case .discarded: posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0)
        case .file(let path):
            posix_spawn_file_actions_addopen(&actions, descriptor, path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        case .appended(let path):
            posix_spawn_file_actions_addopen(&actions, descriptor, path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        }
    }

    /// Sends the process `signal`.
    package func signal(_ signal: Int32 = SIGTERM) {
        kill(id, signal)
    }

    /// Waits, on the calling thread, for the process to end, and returns its exit status: 128 and the signal's
    /// number for one a signal ended, as a shell says.
    package func waitUntilExit() -> Int32 {
        var status: Int32 = 0
        while waitpid(id, &status, 0) == -1 {
            guard errno == EINTR else { return -1 }
        }
        // NB: WIFEXITED, WEXITSTATUS and WTERMSIG are macros Swift does not import.
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Waits for the process to end on a thread of its own, not one of the concurrency pool's, and returns its exit
    /// status as `waitUntilExit` does.
    package func exitStatus() async -> Int32 {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: waitUntilExit()) }
        }
    }

    /// Runs the program to its end, and returns its exit status and what it wrote to `capturing`'s streams.
    package static func run(
        _ arguments: [String], environment: [String: String]? = nil, capturing: Captured = .both
    ) async throws -> (status: Int32, output: String) {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: file) }
        let process = try ChildProcess(
            arguments, environment: environment,
            standardOutput: capturing == .standardError ? .discarded : .file(file.path),
            standardError: capturing == .standardOutput ? .discarded : .file(file.path))
        let status = await process.exitStatus()
        return (status, (try? String(contentsOf: file, encoding: .utf8)) ?? "")
    }

    /// The streams `run` returns.
    package enum Captured: Sendable {
        case both, standardOutput, standardError
    }
}

/// A program that could not be started, with a one-line reason.
package struct ChildProcessError: Error, CustomStringConvertible {
    package var description: String

    init(_ description: String) { self.description = description }
}
