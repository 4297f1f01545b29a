import ArgumentParser
import Foundation
import ServiceKit

/// The accounts service: `accounts` (or `accounts serve`) serves sign-up, login and tokens; `accounts moderator add
/// EMAIL` makes a student a moderator of their campus.
@main
struct Accounts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accounts", abstract: "Signs students up and in and issues their tokens.",
        subcommands: [Serve.self, Moderator.self], defaultSubcommand: Serve.self)
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serves the accounts API (the default). Settings come from the environment; see the README.")

    func run() async {
        await ServiceMain.run(service: "accounts", defaultPort: 8081, build: buildApplication)
    }
}

/// `accounts moderator`: who moderates each campus.
struct Moderator: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manages the moderators of the campuses.", subcommands: [Add.self])

    /// `accounts moderator add EMAIL`: the student of that email may read their campus's reports and suspend its
    /// students.
    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Makes the student of EMAIL a moderator of their campus.", discussion: "Reads POSTGRES_URL.")

        @Argument(help: "The email of a student.")
        var email: String

        func run() async throws {
            let made: Bool
            do {
                let configuration = try ServiceConfiguration(service: "accounts", defaultPort: 8081)
                let logger = ServiceLogging.bootstrap(configuration)
                let database = try await openDatabase(
                    configuration, migrations: Bundle.module.url(forResource: "Migrations", withExtension: nil)!,
                    logger: logger)
                made = try await AccountPostgresRepository(database: database).makeModerator(email: email)
                try await database.close()
            } catch {
                ServiceMain.fail("accounts moderator", error)
            }
            guard made else {
                FileHandle.standardError.write(Data("accounts moderator: no student has the email \(email)\n".utf8))
                throw ExitCode.failure
            }
            print("\(email) is a moderator of their campus")
        }
    }
}
