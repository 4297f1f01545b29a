import Foundation
import Postgres
import TestSupport
import Testing

@Suite struct PostgresTests {
    static let migrations = [
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Migrations")
    ]

    @Test func parametersRoundTripUnchanged() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)
        let texts = ["O'Brien said \"hi\"", "Käpylä", "🍜 ramen", "back\\slash", "$1 and $2", "", "tab\tnew\nline"]
        let when = Date(timeIntervalSince1970: 1_790_000_000.123456)
        let bytes = Data([0, 1, 2, 254, 255])

        for text in texts {
            try await database.pool.query(
                "INSERT INTO things (id, name, note, happened_at, payload, flag, amount) VALUES (\(UUID()), \(text), \(nil as String?), \(when), \(bytes), \(true), \(Int64.max))"
            )
        }
        let rows = try await database.pool.query("SELECT name, note, happened_at, payload, flag, amount FROM things")

        #expect(Set(try rows.map { try $0.decode("name", as: String.self) }) == Set(texts))
        for row in rows {
            #expect(try row.decode("note", as: String?.self) == nil)
            let decoded = try row.decode("happened_at", as: Date.self)
            #expect(abs(decoded.timeIntervalSince1970 - when.timeIntervalSince1970) < 0.000_001)
            #expect(try row.decode("payload", as: Data.self) == bytes)
            #expect(try row.decode("flag", as: Bool.self))
            #expect(try row.decode("amount", as: Int64.self) == Int64.max)
        }
    }

    @Test func textArraysRoundTripUnchanged() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)
        // A quote or a backslash that a combining mark follows is one character with it, and must be escaped all
        // the same; so must what an array literal would read as its own (commas, braces, NULL, spaces).
        let texts = [
            "\"\u{301}", "a\\\u{308},b", "{\"x\": [1, 2]}", "NULL", "", "  padded  ", "Käpylä 🍜", "tab\tnew\nline",
        ]

        let rows = try await database.pool.query(
            "SELECT value FROM unnest(\(texts)::text[]) WITH ORDINALITY AS t(value, n) ORDER BY n")

        #expect(try rows.map { try $0.decode("value", as: String.self) } == texts)
    }

    @Test func everyDoubleIsAcceptedAndATooSmallOneIsZero() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)
        let values: [Double] = [-5e-324, 2.3e-308, 1.5, -0.1, Double.greatestFiniteMagnitude, .infinity, -.infinity]

        var read: [Double] = []
        for value in values {
            read.append(
                try await database.pool.query("SELECT \(value)::float8 AS x").first!.decode("x", as: Double.self))
        }
        let nan = try await database.pool.query("SELECT \(Double.nan)::float8 AS x").first!.decode("x", as: Double.self)

        #expect(read == [0, 2.3e-308, 1.5, -0.1, Double.greatestFiniteMagnitude, .infinity, -.infinity])
        #expect(nan.isNaN)
    }

    @Test func anInjectionAttemptStaysData() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)
        let attack = "x'); DROP TABLE things; --"

        try await database.pool.query("INSERT INTO things (id, name) VALUES (\(UUID()), \(attack))")
        let rows = try await database.pool.query("SELECT name FROM things WHERE name = \(attack)")

        #expect(rows.count == 1)
        #expect(try rows.first?.decode("name", as: String.self) == attack)
    }

    @Test func aValueWithAZeroCharacterIsRefusedNotCutShort() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)

        let error = await #expect(throws: PostgresError.self) {
            try await database.pool.query("INSERT INTO things (id, name) VALUES (\(UUID()), \("Aino\u{0}Virtanen"))")
        }
        let stored = try await database.pool.query("SELECT 1 FROM things")

        #expect(error?.sqlState == "22021")
        #expect(stored.isEmpty)
    }

    @Test func connectionsTheServerClosedWhileIdleAreReopenedBeforeUse() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations, poolSize: 2)
        try await database.pool.query("SELECT 1")
        // As when PostgreSQL restarts: the server ends every session of the pool while they sit idle.
        let other = try PostgresConnection(url: database.url)
        // The server answers once each session's process has exited (or 10 s passed), so that its socket is closed.
        let ended = try other.query(
            """
            SELECT pg_terminate_backend(pid, 10000) AS ended FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
            """
        ).map { try $0.decode("ended", as: Bool.self) }

        let answers = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 { group.addTask { try await database.pool.query("SELECT 1 AS one").first!.decode("one") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }

        #expect(ended == [true, true])
        #expect(answers == [1, 1, 1, 1])
    }

    @Test func aFailedTransactionLeavesNothingBehind() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)
        struct Abort: Error {}

        await #expect(throws: Abort.self) {
            try await database.pool.transaction { connection in
                try connection.query("INSERT INTO things (id, name) VALUES (\(UUID()), 'first')")
                try connection.query("INSERT INTO things (id, name) VALUES (\(UUID()), 'second')")
                throw Abort()
            }
        }
        let count = try await database.pool.query("SELECT count(*) AS n FROM things").first?.decode("n", as: Int.self)

        #expect(count == 0)
    }

    @Test func queuedStatementsRunInOrderBeforeTheNextReadAndCommitWithTheTransaction() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)

        let seen = try await database.pool.transaction { connection in
            try connection.enqueue("INSERT INTO counters (name, value) VALUES ('hits', 1)")
            try connection.enqueue("UPDATE counters SET value = value + 1 WHERE name = 'hits'")
            let seen = try connection.query("SELECT value FROM counters WHERE name = 'hits'").first?.decode(
                "value", as: Int.self)
            // Left in the queue: it goes with the COMMIT.
            try connection.enqueue("INSERT INTO things (id, name) VALUES (\(UUID()), 'last')")
            return seen
        }
        let stored = try await database.pool.query(
            "SELECT (SELECT value FROM counters) AS hits, (SELECT count(*) FROM things) AS things"
        ).first

        #expect(seen == 2)
        #expect(try stored?.decode("hits", as: Int.self) == 2)
        #expect(try stored?.decode("things", as: Int.self) == 1)
    }

    @Test func aLastStatementCommitsInItsOwnRoundTripAndOneThatFailsLeavesNothing() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)

        let returned = try await database.pool.transaction { connection in
            try connection.enqueue("INSERT INTO counters (name, value) VALUES ('hits', 1)")
            return try connection.queryCommitting(
                "INSERT INTO things (id, name) VALUES (\(UUID()), 'last') RETURNING name"
            ).first?.decode("name", as: String.self)
        }
        await #expect(throws: PostgresError.self) {
            try await database.pool.transaction { connection in
                try connection.enqueue("INSERT INTO counters (name, value) VALUES ('misses', 1)")
                _ = try connection.queryCommitting("INSERT INTO things (id, name) VALUES (NULL, 'no id')")
            }
        }
        let stored = try await database.pool.query(
            "SELECT (SELECT string_agg(name, ',') FROM counters) AS counters, (SELECT count(*) FROM things) AS things"
        ).first

        #expect(returned == "last")
        #expect(try stored?.decode("counters", as: String.self) == "hits")
        #expect(try stored?.decode("things", as: Int.self) == 1)
    }

    @Test func statementsSentTogetherEachGetTheirOwnRowsAfterWhatWasQueuedAndAFailingOneThrows() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)
        let names: SQL = "SELECT name FROM things ORDER BY name"
        let hits: SQL = "SELECT value FROM counters WHERE name = 'hits'"

        let (seenNames, seenHits) = try await database.pool.transaction { connection in
            try connection.enqueue("INSERT INTO things (id, name) VALUES (\(UUID()), 'b'), (\(UUID()), 'a')")
            try connection.enqueue("INSERT INTO counters (name, value) VALUES ('hits', 7)")
            let results = try connection.query(all: [names, hits])
            return (
                try results[0].map { try $0.decode("name", as: String.self) },
                try results[1].first?.decode("value", as: Int.self)
            )
        }
        #expect(seenNames == ["a", "b"])
        #expect(seenHits == 7)

        await #expect(throws: PostgresError.self) {
            try await database.pool.transaction { connection in
                try connection.enqueue("INSERT INTO things (id, name) VALUES (\(UUID()), 'c')")
                _ = try connection.query(all: [hits, "SELECT 1 / 0 AS never", names])
            }
        }
        let stored = try await database.pool.query("SELECT count(*) AS n FROM things").first?.decode("n", as: Int.self)
        #expect(stored == 2)
    }

    @Test func aQueuedStatementThatFailsThrowsAtTheNextOneAndUndoesTheTransaction() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)
        let id = UUID()
        try await database.pool.query("INSERT INTO things (id, name) VALUES (\(id), 'one')")

        let atNextRead = await #expect(throws: PostgresError.self) {
            try await database.pool.transaction { connection in
                try connection.enqueue("INSERT INTO counters (name, value) VALUES ('before', 1)")
                try connection.enqueue("INSERT INTO things (id, name) VALUES (\(id), 'again')")
                try connection.enqueue("INSERT INTO counters (name, value) VALUES ('after', 1)")
                try connection.query("SELECT count(*) FROM things")
            }
        }
        // A caller that ignores the next statement's error still sees the transaction fail at its commit.
        let atCommit = await #expect(throws: PostgresError.self) {
            try await database.pool.transaction { connection in
                try connection.enqueue("INSERT INTO things (id, name) VALUES (\(id), 'again')")
                _ = try? connection.query("SELECT 1")
            }
        }
        let left = try await database.pool.withConnection { connection in
            // The same statements, prepared in the failed pipelines, run on the same connection afterwards.
            try connection.transaction { connection in
                try connection.enqueue("INSERT INTO counters (name, value) VALUES ('before', 1)")
                try connection.enqueue("INSERT INTO counters (name, value) VALUES ('after', 1)")
            }
            return try connection.query(
                "SELECT (SELECT count(*) FROM counters) AS counters, (SELECT count(*) FROM things) AS things"
            ).first
        }

        #expect(atNextRead?.sqlState == "23505")
        #expect(atNextRead?.constraint == "things_pkey")
        #expect(atCommit?.sqlState == "23505")
        #expect(try left?.decode("counters", as: Int.self) == 2)
        #expect(try left?.decode("things", as: Int.self) == 1)
    }

    @Test func outsideATransactionAQueuedStatementRunsAtOnce() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)

        try await database.pool.withConnection { connection in
            try connection.enqueue("INSERT INTO things (id, name) VALUES (\(UUID()), 'now')")
        }
        let stored = try await database.pool.query("SELECT count(*) AS n FROM things").first?.decode("n", as: Int.self)

        #expect(stored == 1)
    }

    @Test func statementsSentTogetherAllCommitEachWithItsOwnRowsAndOnlyTheFailingOneFails() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)
        let taken = UUID()
        try await database.pool.query("INSERT INTO things (id, name) VALUES (\(taken), 'taken')")
        let group = GroupCommit(database: database.pool, batchLimit: 8)
        let ids = (0..<40).map { $0 == 17 ? taken : UUID() }

        let answers = await withTaskGroup(of: (Int, Result<String, PostgresError>).self) { tasks in
            for (number, id) in ids.enumerated() {
                tasks.addTask {
                    do {
                        let row = try await group.query(
                            "INSERT INTO things (id, name) VALUES (\(id), \("thing \(number)")) RETURNING name")
                        return (number, .success(try row.first!.decode("name")))
                    } catch let error as PostgresError {
                        return (number, .failure(error))
                    } catch {
                        return (number, .failure(PostgresError(sqlState: nil, message: "\(error)")))
                    }
                }
            }
            return await tasks.reduce(into: [Int: Result<String, PostgresError>]()) { $0[$1.0] = $1.1 }
        }
        let stored = try await database.pool.query("SELECT count(*) AS n FROM things").first?.decode("n", as: Int.self)

        for number in ids.indices where number != 17 {
            #expect(try answers[number]?.get() == "thing \(number)")
        }
        #expect(throws: PostgresError.self) { try answers[17]?.get() }
        #expect(stored == 40)
    }

    @Test func aUniqueViolationSurfacesAsItsSQLState() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)
        let id = UUID()
        try await database.pool.query("INSERT INTO things (id, name) VALUES (\(id), 'one')")

        let error = await #expect(throws: PostgresError.self) {
            try await database.pool.query("INSERT INTO things (id, name) VALUES (\(id), 'again')")
        }

        #expect(error?.sqlState == "23505")
        #expect(error?.isUniqueViolation == true)
        #expect(error?.constraint == "things_pkey")
    }

    @Test func aSerializationFailureIsRetried() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)
        try await database.pool.query("INSERT INTO counters (name, value) VALUES ('hits', 0)")

        // Ten concurrent serializable increments conflict with each other; retries make every one count.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    try await database.pool.transaction(isolation: .serializable, attempts: 50) { connection in
                        let value = try connection.query("SELECT value FROM counters WHERE name = 'hits'").first!
                            .decode("value", as: Int.self)
                        try connection.query("UPDATE counters SET value = \(value + 1) WHERE name = 'hits'")
                    }
                }
            }
            try await group.waitForAll()
        }
        let value = try await database.pool.query("SELECT value FROM counters").first?.decode("value", as: Int.self)

        #expect(value == 10)
    }

    @Test func aTransactionThatIsNotDurableSkipsTheFlushAndOnlyItself() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)
        @Sendable func setting(_ connection: PostgresConnection) throws -> String {
            try connection.query("SELECT current_setting('synchronous_commit') AS value").first!.decode("value")
        }

        let (inside, committed) = try await database.pool.withConnection { connection in
            let inside = try connection.transaction(durable: false) { connection in
                try connection.query("INSERT INTO counters (name, value) VALUES ('position', 1)")
                return try setting(connection)
            }
            return (inside, try setting(connection))
        }
        let durable = try await database.pool.transaction { try setting($0) }
        let stored = try await database.pool.query("SELECT value FROM counters WHERE name = 'position'")

        #expect(inside == "off")
        #expect(committed == "on")
        #expect(durable == "on")
        #expect(try stored.first?.decode("value", as: Int.self) == 1)
    }

    @Test func listenReceivesANotifyAfterCommit() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)
        let listener = try PostgresConnection(url: database.url)
        try listener.query("LISTEN things_changed")

        try await database.pool.transaction { connection in
            try connection.query("SELECT pg_notify('things_changed', \("Käpylä"))")
        }
        let notifications = try listener.waitForNotifications(timeout: 5)

        #expect(notifications == [PostgresNotification(channel: "things_changed", payload: "Käpylä")])
    }

    @Test func aPreparedStatementFollowsItsTableWhenTheTableChanges() async throws {
        let database = try await TestDatabase.make(migrations: Self.migrations)
        let connection = try PostgresConnection(url: database.url)
        try connection.query("INSERT INTO things (id, name) VALUES (\(UUID()), \("Käpylä"))")
        let read: SQL = "SELECT * FROM things"
        #expect(try connection.query(read).first?.decode("name", as: String.self) == "Käpylä")

        try connection.execute(script: "ALTER TABLE things ADD COLUMN district text NOT NULL DEFAULT 'Kallio'")
        // The statement prepared before the change fails once, as the server refuses a changed row shape to it…
        #expect(throws: PostgresError.self) { try connection.query(read) }
        // …and is prepared again on its next use, inside a transaction too.
        let district = try connection.transaction { try $0.query(read).first?.decode("district", as: String.self) }
        #expect(district == "Kallio")
        #expect(try connection.query("LISTEN things_changed").isEmpty)
    }

    @Test func migrationsApplyOnceEvenWhenStartedTogether() async throws {
        let database = try await TestDatabase.make(migrations: [])
        let migrator = PostgresMigrator(directories: Self.migrations, logger: TestEnvironment.logger)

        async let first = migrator.migrate(database.pool)
        async let second = migrator.migrate(database.pool)
        let applied = try await first + second
        let again = try await migrator.migrate(database.pool)
        let recorded = try await database.pool.query("SELECT count(*) AS n FROM schema_migrations").first?
            .decode("n", as: Int.self)

        #expect(applied == ["0001_create_things", "0002_create_counters"])
        #expect(again.isEmpty)
        #expect(recorded == 2)
    }

    @Test func aQueryWithAFragmentNumbersItsParameters() {
        let filter: SQL = "name = \("a") AND note = \("b")"

        let sql: SQL = "SELECT * FROM things WHERE id = \(UUID()) AND \(filter) LIMIT \(5)"

        #expect(sql.text == "SELECT * FROM things WHERE id = $1 AND name = $2 AND note = $3 LIMIT $4")
        #expect(sql.parameters.count == 4)
    }

    @Test func aFragmentsPlaceholdersAreRenumberedAndItsOtherDollarsKept() {
        let values = (1...10).map(String.init)
        var fragment: SQL = "ARRAY[\(values[0])"
        for value in values.dropFirst() { fragment.append(", \(value)") }
        fragment.append("] @> $$$$ AND x = 'Käpylä'")

        let sql: SQL = "SELECT \(1), \(2), \(fragment)"

        #expect(
            sql.text == "SELECT $1, $2, ARRAY[$3, $4, $5, $6, $7, $8, $9, $10, $11, $12] @> $$$$ AND x = 'Käpylä'")
        #expect(sql.parameters == ["1", "2"] + values)
    }

    @Test func aUUIDsTextIsFoundationsBothWays() {
        for _ in 0..<1000 {
            let id = UUID()
            #expect(id.hexText == id.uuidString)
            #expect(UUID(hexText: id.uuidString) == id)
            #expect(UUID(hexText: id.uuidString.lowercased()) == id)
        }
        let text = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
        for wrong in [
            "", "E621E1F8C36C495A93FC0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E5", text + "0",
            "E621E1F8-C36C-495A-93FC_0C247A3E6E5F", "G621E1F8-C36C-495A-93FC-0C247A3E6E5F",
            "E621E1F-8C36C-495A-93FC-0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6É5",
        ] {
            #expect(UUID(hexText: wrong) == nil, "\(wrong)")
            #expect(UUID(uuidString: wrong) == nil, "\(wrong)")
        }
    }
}
