import Foundation
import Logging
import MatchingCore
import Postgres
import TestSupport
import Testing

@testable import Matching

/// Matching's migrations as the flows own them: the shared tables in Core, each flow's in its own folder.
@Suite struct MatchingMigrationsTests {
    /// Messaging's, the core's, then each flow's, as matching applies them.
    static let folders =
        [PostgresMigrator.messagingDirectory, MatchingMigrations.directory] + matchingFlows.compactMap { $0.migrations }

    @Test func theDeliveryTablesComeFromTheDeliveryFolder() async throws {
        let core = try await TestDatabase.make(migrations: Array(Self.folders.prefix(2)))

        let tables = try await core.pool.query(
            "SELECT table_name FROM information_schema.tables WHERE table_name IN ('runs', 'orders', 'offers', 'matches')"
        )

        #expect(tables.isEmpty)
    }

    @Test func aDatabaseMigratedBeforeDeliveryHadItsFolderMigratesNothingTwice() async throws {
        let database = try await TestDatabase.make(migrations: Self.folders)
        let migrator = PostgresMigrator(directories: Self.folders, logger: Logger(label: "test"))
        // Such a database recorded the delivery tables under matching's first migration, and the migrations after it
        // under the names they still have.
        _ = try await database.pool.query("DELETE FROM schema_migrations WHERE version = '0001_delivery'")
        let columns: SQL = "SELECT count(*) AS n FROM information_schema.columns WHERE table_name = 'matches'"
        let before = try await database.pool.query(columns).first!.decode("n", as: Int64.self)

        let applied = try await migrator.migrate(database.pool)
        let again = try await migrator.migrate(database.pool)

        #expect(applied == ["0001_delivery"])
        #expect(again.isEmpty)
        #expect(try await database.pool.query(columns).first!.decode("n", as: Int64.self) == before)
    }
}
