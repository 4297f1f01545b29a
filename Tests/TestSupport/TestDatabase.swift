import Foundation
import Postgres

/// A fresh PostgreSQL database for one test, cloned from a template that the given migrations built once per run.
public struct TestDatabase: Sendable {
    public let url: String
    public let pool: PostgresPool

    /// Creates `test_<uuid>` from the template of `migrations` (a list of migration folders).
    public static func make(migrations: [URL], poolSize: Int = 4) async throws -> TestDatabase {
        let template = try await Templates.shared.template(for: migrations)
        let name = "test_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
        try await Templates.shared.admin.withConnection { connection in
            try connection.execute(script: "CREATE DATABASE \(name) TEMPLATE \(template)")
        }
        let url = TestEnvironment.replacingPath(of: TestEnvironment.postgresURL, with: name)
        return TestDatabase(url: url, pool: try PostgresPool(url: url, size: poolSize, logger: TestEnvironment.logger))
    }
}

/// Builds each template once per test process; creating databases is serialised because PostgreSQL refuses to
/// copy a template that another session is using.
actor Templates {
    static let shared = Templates()
    private var templates: [String: Task<String, any Error>] = [:]

    func template(for migrations: [URL]) async throws -> String {
        let key = migrations.map(\.path).joined(separator: "|")
        if let existing = templates[key] { return try await existing.value }
        let task = Task<String, any Error> {
            let name = "template_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
            try await self.admin.withConnection { connection in try connection.execute(script: "CREATE DATABASE \(name)") }
            let url = TestEnvironment.replacingPath(of: TestEnvironment.postgresURL, with: name)
            let pool = try PostgresPool(url: url, size: 1, logger: TestEnvironment.logger)
            try await PostgresMigrator(directories: migrations, logger: TestEnvironment.logger).migrate(pool)
            try await pool.withConnection { _ in }
            try await pool.close()
            return name
        }
        templates[key] = task
        return try await task.value
    }

    /// One administrative connection (to the `postgres` database); being one, it also serialises CREATE DATABASE.
    nonisolated let admin: PostgresPool = try! PostgresPool(
        url: TestEnvironment.postgresURL, size: 1, applicationName: "tests", logger: TestEnvironment.logger)
}
