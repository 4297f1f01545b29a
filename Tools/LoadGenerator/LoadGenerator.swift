import ArgumentParser
import Foundation

/// `load`: drives the running system through its gateway and reports what clients saw. `load --help` tells how.
@main
struct LoadGenerator: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "A load generator for Tarrare, driving the running system through its gateway like the apps do.",
        discussion: LoadOptions.discussion)

    @OptionGroup var options: LoadOptions

    func run() async throws {
        do {
            try await LoadRun(options: options).run()
        } catch {
            FileHandle.standardError.write(Data("load: \(error)\n".utf8))
            throw ExitCode.failure
        }
    }
}
