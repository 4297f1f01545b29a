import Foundation
import Postgres

/// A fresh PostgreSQL database for one test, cloned from a template that the given migrations built once per run.
public struct TestDatabase: Sendable {
    public let url: String
    public let pool: PostgresPool

    /// Creates `test_<started>_<uuid>` from the template of `migrations` (a list of migration folders). It outlives
    /// the test, so that a failure can be looked into, until a run an hour or more later drops it.
    public static func make(migrations: [URL], poolSize: Int = 4) async throws -> TestDatabase {
        let template = try await Templates.shared.template(for: migrations)
        let name = Templates.name("test")
        try await Templates.shared.admin.withConnection { connection in
            try connection.execute(script: "CREATE DATABASE \(name) TEMPLATE \(template)")
        }
        let url = TestEnvironment.replacingPath(of: TestEnvironment.postgresURL, with: name)
        return TestDatabase(url: url, pool: try PostgresPool(url: url, size: poolSize, logger: TestEnvironment.logger))
    }

    /// Every row of every table (outbox and inbox included) whose text contains `text` in any case, each as
    /// `<table>: <row>`: what a test of an erasure expects to be empty for what named the person.
    public func rowsContaining(_ text: String) async throws -> [String] {
        let tables = try await pool.query(
            """
            SELECT quote_ident(table_name) AS name FROM information_schema.tables
            WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name
            """
        ).map { try $0.decode("name", as: String.self) }
        var rows: [String] = []
        for table in tables {
            rows += try await pool.query(
                """
                SELECT t::text AS row FROM \(unescaped: table) t WHERE strpos(lower(t::text), lower(\(text))) > 0
                """
            ).map { "\(table): \(try $0.decode("row", as: String.self))" }
        }
        return rows
    }
}

/// Builds each template once per test process; creating databases is serialised because PostgreSQL refuses to
/// copy a template that another session is using.
actor Templates {
    static let shared = Templates()
    private var templates: [String: Task<String, any Error>] = [:]

    private var swept = false

    /// When this process started, in seconds since 1970: part of the name of every database it makes.
    static let started = Int(Date().timeIntervalSince1970)

    /// What runs that started before this left behind (databases, the broker's vhosts) is swept: an hour earlier.
    static let leftoversBefore = started - 3600

    /// `<kind>_<started>_<uuid>`: 48 characters, under PostgreSQL's 63.
    static func name(_ kind: String) -> String {
        "\(kind)_\(started)_\(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))"
    }

    func template(for migrations: [URL]) async throws -> String {
        if !swept {
            swept = true
            Self.dropLeftovers()
        }
        let key = migrations.map(\.path).joined(separator: "|")
        if let existing = templates[key] { return try await existing.value }
        let task = Task<String, any Error> {
            let name = Self.name("template")
            try await self.admin.withConnection { connection in
                try connection.execute(script: "CREATE DATABASE \(name)")
            }
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

    /// Drops, in the background, the databases that runs which started over an hour ago made and that nobody uses.
    /// Each test makes one (with PostGIS, megabytes), and a run of the whole suite over a hundred; a run still going,
    /// or one whose databases are being looked into, keeps them. Names without a start time are from before names
    /// had one. What the process does not get to before it ends, the next run drops.
    private static func dropLeftovers() {
        let cutoff = leftoversBefore
        Task.detached(priority: .background) {
            // NB: a pool of its own, whose thread the drops (about 0.1 s each) may hold for minutes,
            // rather than the admin connection that creates the tests' databases.
            guard
                let sweeper = try? PostgresPool(
                    url: TestEnvironment.postgresURL, size: 1, applicationName: "tests sweeper",
                    logger: TestEnvironment.logger)
            else { return }
            _ = try? await sweeper.withConnection { connection in
                let leftovers = try connection.query(
                    """
                    SELECT datname FROM pg_database d
                    WHERE (datname ~ '^(test|template)_[0-9a-f]{32}$'
                        OR (datname ~ '^(test|template)_[0-9]+_[0-9a-f]{32}$'
                            AND split_part(datname, '_', 2)::bigint < \(cutoff)))
                        AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)
                    """
                ).map { try $0.decode("datname", as: String.self) }
                // Another run may drop one first, or connect to one meanwhile: either way it is not this run's.
                for name in leftovers { try? connection.execute(script: "DROP DATABASE IF EXISTS \(name)") }
            }
            try? await sweeper.close()
        }
    }

    /// One administrative connection (to the `postgres` database); being one, it also serialises CREATE DATABASE.
    nonisolated let admin: PostgresPool = try! PostgresPool(
        url: TestEnvironment.postgresURL, size: 1, applicationName: "tests", logger: TestEnvironment.logger)
}
