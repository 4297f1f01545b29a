import BenchmarkSupport
import Foundation
import Logging
import Messaging
import Postgres
import ServiceKit

/// Two floors of this machine that every event of the system pays at least once: a durable RabbitMQ round trip
/// (publish with confirm to a quorum queue, consume, ack) and a durable single-row PostgreSQL INSERT (one row a
/// transaction, `synchronous_commit` on), each one at a time.
struct MachineLimits: Sendable {
    var brokerConfirm: Distribution
    var brokerRoundTrip: Distribution
    var insert: Distribution

    /// Measures both: the broker through `TEST_AMQP_URL` (or `BENCH_AMQP_URL`), PostgreSQL in a database made anew
    /// through `BenchmarkDatabase`.
    static func measure(samples: Int, logger: Logger) async throws -> MachineLimits {
        let trips = try await BrokerRoundTrip(url: try amqpURL()).measure(count: samples)
        let inserts = try await measureInserts(samples: samples, logger: logger)
        return MachineLimits(
            brokerConfirm: Distribution(trips.map(\.confirmed)),
            brokerRoundTrip: Distribution(trips.map(\.acknowledged)),
            insert: Distribution(inserts))
    }

    private static func measureInserts(samples: Int, logger: Logger) async throws -> [Double] {
        let database = try await probesDatabase(named: "benchmark_load_limits", logger: logger)
        let body = String(repeating: "x", count: 256)
        let times = try await database.withConnection { connection -> [Double] in
            try connection.execute(script: "SET synchronous_commit = on")
            var times: [Double] = []
            for index in 0..<(samples + 20) {
                let start = Stopwatch.now()
                try connection.query("INSERT INTO insert_probes (id, body) VALUES (\(UUID()), \(body))")
                if index >= 20 { times.append(Stopwatch.now() - start) }
            }
            return times
        }
        try await database.close()
        return times
    }

    /// What the guarantees of one chat message cost PostgreSQL and RabbitMQ alone, at `rate` a second for `seconds`:
    /// each message two durable single-row INSERTs, each its own commit (chat's send, notifications' feed entry), and
    /// a durable broker round trip (publish with confirm to a quorum queue, consume, acknowledged every 50 ms). CPU
    /// seconds by process over the run, from the kernel's accounting; nothing of the system runs the path meanwhile.
    static func measureCost(rate: Double, seconds: Double, logger: Logger) async throws -> (
        messages: Int, cpu: [String: Double]
    ) {
        let broker = BrokerRoundTrip(url: try amqpURL())
        let database = try await probesDatabase(named: "benchmark_load_cost", logger: logger)
        let connection = try PostgresConnection(url: database.url, applicationName: "load-cost")
        try connection.execute(script: "SET synchronous_commit = on")
        let body = String(repeating: "x", count: 256)
        let before = ProcessCPU.sample()
        let messages = try await broker.pace(rate: rate, seconds: seconds) {
            for _ in 0..<2 {
                try connection.query("INSERT INTO insert_probes (id, body) VALUES (\(UUID()), \(body))")
            }
        }
        let cpu = ProcessCPU.sample().since(before)
        try await database.close()
        return (messages, cpu)
    }

    /// The broker's URL for the measurements: `BENCH_AMQP_URL`, else `TEST_AMQP_URL`. A scenario asks before it
    /// starts, so that a run that could not end in its report does not begin.
    static func amqpURL() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["BENCH_AMQP_URL"] ?? environment["TEST_AMQP_URL"] else {
            throw LoadError(
                "set TEST_AMQP_URL (eval \"$(scripts/infra env)\") to measure the broker's round trip, or pass --no-limits"
            )
        }
        return url
    }

    /// A database made anew with the load generator's migrations (the `insert_probes` table).
    private static func probesDatabase(named name: String, logger: Logger) async throws -> PostgresPool {
        guard let migrations = Bundle.module.url(forResource: "Migrations", withExtension: nil) else {
            throw LoadError("the load generator's Migrations folder is missing from its bundle")
        }
        return try await BenchmarkDatabase.fresh(named: name, migrations: migrations, poolSize: 1, logger: logger)
    }
}
