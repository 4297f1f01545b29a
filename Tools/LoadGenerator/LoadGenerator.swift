import Foundation

/// `load`: drives the running system through its gateway and reports what clients saw. `load --help` tells how.
@main
struct LoadGenerator {
    static func main() async {
        do {
            let options = try LoadOptions(arguments: Array(CommandLine.arguments.dropFirst()))
            try await LoadRun(options: options).run()
        } catch is HelpRequested {
            print(LoadOptions.help)
        } catch {
            FileHandle.standardError.write(Data("load: \(error)\n".utf8))
            exit(1)
        }
    }
}
