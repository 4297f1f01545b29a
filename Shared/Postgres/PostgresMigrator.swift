import Foundation
import Logging

/// Applies a service's ordered SQL files once each, under an advisory lock so that replicas starting together
/// take turns, and records them in `schema_migrations`.
public struct PostgresMigrator: Sendable {
    /// Folders of SQL files named `0001_create_users.sql`: each folder in turn, its files in name order.
    public let directories: [URL]
    private let logger: Logger

    public init(directories: [URL], logger: Logger) {
        self.directories = directories
        self.logger = logger
    }

    /// Applies every migration not yet recorded and returns the names it applied.
    @discardableResult
    public func migrate(_ pool: PostgresPool) async throws -> [String] {
        let files = try directories.flatMap { directory in
            try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "sql" }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
        }
        let migrations = try files.map { file in
            (name: file.deletingPathExtension().lastPathComponent, sql: try String(contentsOf: file, encoding: .utf8))
        }
        let logger = logger
        return try await pool.withConnection { connection in
            // NB: a session-level lock, held across the per-file transactions and released at the end.
            try connection.query("SELECT pg_advisory_lock(\(Self.lockKey))")
            defer { _ = try? connection.query("SELECT pg_advisory_unlock(\(Self.lockKey))") }
            try connection.execute(
                script: """
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version text PRIMARY KEY,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    )
                    """)
            let applied = Set(
                try connection.query("SELECT version FROM schema_migrations").map {
                    try $0.decode("version", as: String.self)
                })
            var appliedNow: [String] = []
            for migration in migrations where !applied.contains(migration.name) {
                try connection.transaction { connection in
                    try connection.execute(script: migration.sql)
                    try connection.query("INSERT INTO schema_migrations (version) VALUES (\(migration.name))")
                }
                logger.info("applied migration", metadata: ["migration": "\(migration.name)"])
                appliedNow.append(migration.name)
            }
            return appliedNow
        }
    }

    static let lockKey: Int64 = 0x7461_7272_6172_6501
}
