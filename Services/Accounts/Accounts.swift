import Foundation
import ServiceKit

/// The accounts service: sign-up, login and tokens. `accounts moderator add EMAIL` makes a student a moderator of
/// their campus instead.
@main
struct Accounts {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "moderator" {
            await ModeratorCommand.run(arguments: Array(arguments.dropFirst()))
            return
        }
        await ServiceMain.run(service: "accounts", defaultPort: 8081, build: buildApplication)
    }
}

/// `accounts moderator add EMAIL`: the student of that email may read their campus's reports and suspend its students.
/// Reads POSTGRES_URL.
enum ModeratorCommand {
    static func run(arguments: [String]) async {
        guard arguments.count == 2, arguments[0] == "add" else {
            FileHandle.standardError.write(Data("usage: accounts moderator add EMAIL\n".utf8))
            exit(2)
        }
        do {
            let configuration = try ServiceConfiguration(service: "accounts", defaultPort: 8081)
            let logger = ServiceLogging.bootstrap(configuration)
            let database = try await openDatabase(
                configuration, migrations: Bundle.module.url(forResource: "Migrations", withExtension: nil)!,
                logger: logger)
            let made = try await AccountPostgresRepository(database: database).makeModerator(email: arguments[1])
            try await database.close()
            guard made else {
                FileHandle.standardError.write(
                    Data("accounts moderator: no student has the email \(arguments[1])\n".utf8))
                exit(1)
            }
            print("\(arguments[1]) is a moderator of their campus")
        } catch {
            ServiceMain.fail("accounts moderator", error)
        }
    }
}
