import Foundation
import Logging
import Messaging
import Postgres

/// A database made anew for a benchmark command, through `BENCH_POSTGRES_URL` (or the test command's
/// `TEST_POSTGRES_URL`): a role that can create databases.
public enum BenchmarkDatabase {
    public static var adminURL: String {
        let environment = ProcessInfo.processInfo.environment
        return environment["BENCH_POSTGRES_URL"] ?? environment["TEST_POSTGRES_URL"]
            ?? "postgres://tarrare_admin@127.0.0.1:5432/postgres"
    }

    /// Drops and creates `name`, then applies the outbox, inbox and `migrations`.
    public static func fresh(named name: String, migrations: URL, poolSize: Int, logger: Logger) async throws
        -> PostgresPool
    {
        try await fresh(named: name, migrations: [migrations], poolSize: poolSize, logger: logger)
    }

    /// Drops and creates `name`, then applies the outbox, inbox and each folder of `migrations` in turn.
    public static func fresh(named name: String, migrations: [URL], poolSize: Int, logger: Logger) async throws
        -> PostgresPool
    {
        let admin = try PostgresConnection(url: adminURL, applicationName: "benchmark")
        try admin.execute(script: "DROP DATABASE IF EXISTS \(name)")
        try admin.execute(script: "CREATE DATABASE \(name)")
        var components = URLComponents(string: adminURL)!
        components.path = "/\(name)"
        let pool = try PostgresPool(
            url: components.string!, size: poolSize, applicationName: "benchmark", logger: logger)
        try await PostgresMigrator(directories: [PostgresMigrator.messagingDirectory] + migrations, logger: logger)
            .migrate(pool)
        return pool
    }
}
