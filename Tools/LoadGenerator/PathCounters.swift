import AsyncHTTPClient
import Foundation
import NIOCore
import Postgres

/// What PostgreSQL and RabbitMQ did over a phase, by their own counters: commits, WAL records and flushes, rows and
/// index entries written, statements, and the broker's publishes, confirms, deliveries and acknowledgements, with the
/// writes to quorum queues apart. Read through the administrators' URLs `scripts/infra env` gives (`TEST_POSTGRES_URL`,
/// `TEST_AMQP_URL` for the broker's credentials and `TEST_RABBITMQ_API`); left out when they are not set or cannot
/// be read.
///
/// NB: both servers publish their counters late: a PostgreSQL backend reports its own when its transaction ends, at
/// most once a second (an idle one within ten seconds), and RabbitMQ's management collects every five seconds, so a
/// phase's figures are read after it drained and a few seconds more.
struct PathCounters: Sendable {
    var values: [String: Double]
    /// Where the WAL was when the sample was taken.
    var walPosition: String?

    /// The counters, in the order the report lists them, each with what it counts.
    static let described: [(key: String, meaning: String)] = [
        ("commits", "commits that wrote (commit records in the WAL, pg_walinspect)"),
        ("rowInserts", "rows inserted (heap insert records)"),
        ("indexInserts", "index entries inserted (B-tree insert records)"),
        ("rowLocks", "rows locked (FOR SHARE, and ON CONFLICT's lock before its update)"),
        ("walFlushes", "WAL flushes to the disk (fsync)"),
        ("walRecords", "WAL records"),
        ("walBytes", "WAL bytes"),
        ("rowsChanged", "rows inserted, updated or deleted"),
        ("statements", "statements run (pg_stat_statements, where it is loaded)"),
        ("published", "messages published to the broker"),
        ("confirmed", "publishes the broker confirmed"),
        ("quorumWrites", "messages written to quorum queues (each a replicated, synced log entry)"),
        ("quorumSettles", "quorum queues' messages acknowledged (those acknowledged together share a log entry)"),
        ("delivered", "messages the broker delivered to consumers"),
        ("acknowledged", "messages consumers acknowledged"),
    ]

    static let environment = ProcessInfo.processInfo.environment

    /// Reads both servers now; nil when the administrators' URLs are not set or a server cannot be read.
    static func sample() async -> PathCounters? {
        guard let postgresURL = environment["TEST_POSTGRES_URL"], let api = environment["TEST_RABBITMQ_API"],
            let amqp = environment["TEST_AMQP_URL"].flatMap(URLComponents.init(string:)),
            let user = amqp.user, let password = amqp.password
        else { return nil }
        do {
            var (values, position) = try postgres(postgresURL)
            values.merge(try await rabbitMQ(api, user, password)) { $1 }
            return PathCounters(values: values, walPosition: position)
        } catch {
            print("warning: the servers' counters could not be read: \(error)")
            return nil
        }
    }

    /// What the servers did since `start`: each counter's increase, and the records of the WAL written since.
    static func since(_ start: PathCounters) async -> PathCounters? {
        guard var now = await sample() else { return nil }
        now.values = now.values.merging(start.values.mapValues { -$0 }) { $0 + $1 }
        if let from = start.walPosition, let url = environment["TEST_POSTGRES_URL"],
            let records = try? walRecords(url, from: from)
        {
            now.values.merge(records) { $1 }
        }
        return now
    }

    /// The WAL's records from `from` to what is flushed, by type, as pg_walinspect reads them.
    private static func walRecords(_ url: String, from: String) throws -> [String: Double] {
        let connection = try PostgresConnection(url: url, applicationName: "load-counters")
        let types = [
            "Transaction/COMMIT": "commits", "Heap/INSERT": "rowInserts", "Heap/INSERT+INIT": "rowInserts",
            "Btree/INSERT_LEAF": "indexInserts", "Heap/LOCK": "rowLocks",
        ]
        var values: [String: Double] = [:]
        for row in try connection.query(
            """
            SELECT "resource_manager/record_type" AS type, count::float8 AS count
            FROM pg_get_wal_stats(\(from)::pg_lsn, pg_current_wal_flush_lsn(), true)
            """)
        {
            guard let key = types[try row.decode("type", as: String.self)] else { continue }
            values[key, default: 0] += try row.decode("count", as: Double.self)
        }
        return values
    }

    private static func postgres(_ url: String) throws -> (values: [String: Double], walPosition: String) {
        let connection = try PostgresConnection(url: url, applicationName: "load-counters")
        // NB: the WAL's records are read with pg_walinspect (PostgreSQL 15's own), made where it is not yet.
        _ = try? connection.query("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
        let row = try connection.query(
            """
            SELECT pg_current_wal_flush_lsn()::text AS position,
                (SELECT sum(tup_inserted + tup_updated + tup_deleted) FROM pg_stat_database)::float8 AS rows_changed,
                wal_records::float8, wal_sync::float8, (pg_current_wal_lsn() - '0/0'::pg_lsn)::float8 AS wal_bytes,
                to_regclass('pg_stat_statements') IS NOT NULL
                    AND current_setting('shared_preload_libraries') LIKE '%pg_stat_statements%' AS statements_readable
            FROM pg_stat_wal
            """
        ).first!
        var values: [String: Double] = [
            "rowsChanged": try row.decode("rows_changed"),
            "walRecords": try row.decode("wal_records"), "walFlushes": try row.decode("wal_sync"),
            "walBytes": try row.decode("wal_bytes"),
        ]
        // NB: asked above, and read in a statement of its own: a query that names pg_stat_statements fails as a whole
        // where it is not made, even in a branch it would not take, and where it is made but not loaded reading it
        // fails; each failure is an error line in the server's log.
        if try row.decode("statements_readable", as: Bool.self),
            let statements = try? connection.query("SELECT sum(calls)::float8 AS statements FROM pg_stat_statements")
                .first?.decode("statements", as: Double.self)
        {
            values["statements"] = statements
        }
        return (values, try row.decode("position"))
    }

    /// Prints a warning when the broker holds virtual hosts other than the system's, or PostgreSQL the tests'
    /// databases: leftovers of earlier test runs (the tests sweep only those over an hour old). Their idle work counts
    /// in the servers' CPU a message: 326 virtual hosts made the broker's 0.3 ms more at 200 a second, and 862
    /// databases, with autovacuum visiting each in turn, PostgreSQL's 0.1 ms.
    static func warnAboutLeftovers() async {
        func warn(_ count: Int, _ what: String, _ process: String) {
            guard count > 0 else { return }
            print(
                "warning: \(count) \(what) left by tests; their idle work counts in \(process)'s CPU (scripts/test "
                    + "removes them when it starts)")
        }
        if let url = environment["TEST_POSTGRES_URL"],
            let connection = try? PostgresConnection(url: url, applicationName: "load-counters"),
            let count = try? connection.query(
                "SELECT count(*) AS count FROM pg_database WHERE datname ~ '^(test|template)_([0-9]+_)?[0-9a-f]{32}$'"
            ).first?.decode("count", as: Int64.self)
        {
            warn(Int(count), "databases in PostgreSQL", "postgres")
        }
        if let api = environment["TEST_RABBITMQ_API"],
            let amqp = environment["TEST_AMQP_URL"].flatMap(URLComponents.init(string:)),
            let user = amqp.user, let password = amqp.password,
            let vhosts = try? await get(api, user, password, "/vhosts?columns=name") as? [[String: Any]]
        {
            warn(vhosts.filter { $0["name"] as? String != "/" }.count, "virtual hosts in the broker", "beam.smp")
        }
    }

    /// A GET of RabbitMQ's management API, its answer's JSON.
    private static func get(_ api: String, _ user: String, _ password: String, _ path: String) async throws -> Any {
        var request = HTTPClientRequest(url: api + path)
        request.headers.add(
            name: "Authorization", value: "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
        // NB: uncompressed: the management API's answers compress so well that they pass the client's limit.
        request.headers.add(name: "Accept-Encoding", value: "identity")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 16 << 20)
        return try JSONSerialization.jsonObject(with: Data(buffer: body))
    }

    private static func rabbitMQ(_ api: String, _ user: String, _ password: String) async throws -> [String: Double] {
        func get(_ path: String) async throws -> Any { try await Self.get(api, user, password, path) }
        func count(_ stats: Any?, _ key: String) -> Double {
            ((stats as? [String: Any])?[key] as? NSNumber)?.doubleValue ?? 0
        }
        let overview = (try await get("/overview") as? [String: Any])?["message_stats"]
        var values: [String: Double] = [
            "published": count(overview, "publish"), "confirmed": count(overview, "confirm"),
            "delivered": count(overview, "deliver_get"), "acknowledged": count(overview, "ack"),
        ]
        let queues = try await get("/queues?columns=type,message_stats") as? [[String: Any]] ?? []
        for queue in queues where queue["type"] as? String == "quorum" {
            values["quorumWrites", default: 0] += count(queue["message_stats"], "publish")
            values["quorumSettles", default: 0] += count(queue["message_stats"], "ack")
        }
        return values
    }
}
