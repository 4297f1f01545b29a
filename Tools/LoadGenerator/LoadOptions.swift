import Foundation

/// The command line: `load [campus|chat|limits] [--flag value]...`.
struct LoadOptions: Sendable {
    enum Scenario: String, Sendable {
        case campus, chat, limits
    }

    var scenario = Scenario.campus
    var gateway = "http://127.0.0.1:8080"
    var students = 200
    var seconds = 60.0
    var delivererShare = 0.4
    var signupConcurrency = 4
    var messagesPerSide = 3
    var reconnectEvery = 20.0
    var loginsPerSecond = 0.5
    var sockets = 200
    var messageInterval = 1.0
    var limitSamples = 300
    var measuresLimits = true
    var httpConnections = 256

    static let help = """
        load: a load generator for Tarrare, driving the running system through its gateway like the apps do.

        USAGE
          load [campus|chat|limits] [options]

        SCENARIOS
          campus (default)  --students students on the bundled Helsinki campus for --seconds: sign-ups (once, at
                            the start, reported apart: bcrypt cost 12), searches as they type, deliverers' check-ins,
                            orders, offers on the deliverer's socket, accepts and declines, chat both ways,
                            completions, logins, and socket reconnects with after= the last seq seen.
          chat              --sockets students hold a socket, paired by real deliveries; each sends its partner a
                            message every --message-interval s: POST → arrival on the partner's socket, messages/s.
          limits            only the two floors of this machine (below).

        Every scenario ends by measuring two floors of this machine, one operation at a time: a durable RabbitMQ
        round trip (publish with confirm to a quorum queue, consume, ack; account from TEST_AMQP_URL or
        BENCH_AMQP_URL) and a durable single-row PostgreSQL INSERT (synchronous_commit on, in a database made anew
        through TEST_POSTGRES_URL or BENCH_POSTGRES_URL). Results are also given as multiples of these floors.

        OPTIONS
          --gateway URL             the gateway (default http://127.0.0.1:8080)
          --seconds S               how long the measured phase runs (default 60)
          --students N              campus: how many students (default 200)
          --deliverer-share F       campus: the share who deliver (default 0.4)
          --messages N              campus: messages each side sends per delivery (default 3)
          --reconnect-every S       campus: drop and resume each socket about every S s, 0 never (default 20)
          --logins-per-second R     campus: logins during the run (default 0.5)
          --sockets N               chat: how many students hold a socket (default 200)
          --message-interval S      chat: seconds between one student's messages, 0 back to back (default 1)
          --signup-concurrency N    sign-ups at once (default 4)
          --limit-samples N         round trips and INSERTs for the floors (default 300)
          --no-limits               skip measuring the floors
          --http-connections N      the client's HTTP connections to the gateway (default 256)
          -h, --help                this text

        RUN IT
          scripts/up                                    # the system, with the gateway on :8080
          eval "$(scripts/infra env)"                   # TEST_AMQP_URL and TEST_POSTGRES_URL for the floors
          swift build -c release --product load
          .build/release/load campus --students 200 --seconds 60
          .build/release/load chat --sockets 200 --seconds 30
          .build/release/load limits
        """

    /// Reads `arguments` (without the program's name); throws with a message for anything it does not know.
    init(arguments: [String]) throws {
        var remaining = arguments[...]
        if let first = remaining.first, !first.hasPrefix("-") {
            guard let scenario = Scenario(rawValue: first) else { throw LoadError("unknown scenario \(first)\n\n\(Self.help)") }
            self.scenario = scenario
            remaining = remaining.dropFirst()
        }
        func value(_ flag: String) throws -> String {
            guard let value = remaining.popFirst() else { throw LoadError("\(flag) needs a value") }
            return value
        }
        func number<T: LosslessStringConvertible>(_ flag: String) throws -> T {
            let text = try value(flag)
            guard let number = T(text) else { throw LoadError("\(flag): \(text) is not a number") }
            return number
        }
        while let flag = remaining.popFirst() {
            switch flag {
            case "--gateway": gateway = try value(flag)
            case "--seconds": seconds = try number(flag)
            case "--students": students = try number(flag)
            case "--deliverer-share": delivererShare = try number(flag)
            case "--messages": messagesPerSide = try number(flag)
            case "--reconnect-every": reconnectEvery = try number(flag)
            case "--logins-per-second": loginsPerSecond = try number(flag)
            case "--sockets": sockets = try number(flag)
            case "--message-interval": messageInterval = try number(flag)
            case "--signup-concurrency": signupConcurrency = try number(flag)
            case "--limit-samples": limitSamples = try number(flag)
            case "--no-limits": measuresLimits = false
            case "--http-connections": httpConnections = try number(flag)
            case "-h", "--help": throw HelpRequested()
            default: throw LoadError("unknown option \(flag)\n\n\(Self.help)")
            }
        }
        guard students >= 2, sockets >= 2, seconds > 0, (0.05...0.95).contains(delivererShare) else {
            throw LoadError("--students and --sockets need at least 2, --seconds more than 0, --deliverer-share 0.05 to 0.95")
        }
    }

    /// How many students sign up for the scenario.
    var population: Int {
        switch scenario {
        case .campus: students
        case .chat: sockets - sockets % 2
        case .limits: 0
        }
    }

    var delivererCount: Int { max(1, Int((Double(students) * delivererShare).rounded())) }
}

/// `--help`: print the usage and stop.
struct HelpRequested: Error {}
