import ArgumentParser

/// The command line: `load [campus|chat|rides|limits] [options]`.
struct LoadOptions: ParsableArguments, Sendable {
    enum Scenario: String, Sendable, CaseIterable, ExpressibleByArgument {
        case campus, chat, rides, limits
    }

    @Argument(help: "campus, chat, rides or limits (see above).")
    var scenario = Scenario.campus
    @Option(help: "The gateway.")
    var gateway = "http://127.0.0.1:8080"
    @Option(help: "How long the measured phase runs, in seconds.")
    var seconds = 60.0
    @Option(help: "campus: how many students.")
    var students = 200
    @Option(help: "campus: the share who deliver (0.05 to 0.95).")
    var delivererShare = 0.4
    @Option(name: .customLong("messages"), help: "campus: messages each side sends per delivery.")
    var messagesPerSide = 3
    @Option(help: "campus: drop and resume each socket about every so many seconds, 0 never.")
    var reconnectEvery = 20.0
    @Option(help: "campus: logins a second during the run.")
    var loginsPerSecond = 0.5
    @Option(help: "chat: how many students hold a socket.")
    var sockets = 200
    @Option(help: "chat: seconds between one student's messages, 0 back to back.")
    var messageInterval = 1.0
    @Option(
        help: """
            chat: messages a second offered in all, each sent at its time however many are still unanswered (an open \
            loop), instead of each student's --message-interval. limits: measure instead what the guarantees of so \
            many chat messages a second cost PostgreSQL and RabbitMQ alone, for --seconds (below).
            """)
    var rate: Double?
    @Option(
        help: "chat: pairs made at once before the measured phase (each a check-in, an order, its offer, an accept).")
    var pairingConcurrency = 16
    @Option(
        help: """
            chat: pairs begun a second, each when its time comes however many are still being made (an open loop, \
            as students order), instead of --pairing-concurrency at once, each begun as one ends.
            """)
    var pairingRate: Double?
    @Option(
        help: """
            chat: seconds into the measured phase when a student signs up and deletes the account, an erasure that \
            reaches every service, as a campus's students do now and then; none unless given.
            """)
    var deleteAccountAfter: Double?
    @Option(help: "rides: how many drivers online, each sending a position every --position-every s.")
    var drivers = 2000
    @Option(help: "rides: how many rides in progress (a rider each, with a driver of the --drivers).")
    var rides = 50
    @Option(help: "rides: seconds between one driver's positions.")
    var positionEvery = 5.0
    @Flag(help: "rides: a socket for every driver too, not only for the riders and their drivers.")
    var allSockets = false
    @Option(help: "Sign-ups at once.")
    var signupConcurrency = 4
    @Option(help: "Round trips and INSERTs for the floors.")
    var limitSamples = 300
    @Flag(name: .customLong("no-limits"), help: "Skip measuring the floors.")
    var skipsLimits = false
    @Option(help: "The client's HTTP connections to the gateway.")
    var httpConnections = 256

    static let discussion = """
        Scenarios:
          campus (default)  --students students on the bundled Helsinki campus for --seconds: sign-ups (once, at \
        the start, reported apart: bcrypt cost 12), searches as they type, deliverers' check-ins, orders, offers on \
        the deliverer's socket, accepts and declines, chat both ways, completions, logins, and socket reconnects \
        with after= the last seq seen.
          chat              --sockets students hold a socket, paired by real deliveries; each sends its partner a \
        message every --message-interval s: POST → arrival on the partner's socket, messages/s.
          rides             --drivers drivers online (a profile, then a position within about 2 km of the campus \
        centre) and --rides riders, each with a ride request that one of the drivers accepts; then for --seconds \
        every driver sends a position every --position-every s (spread evenly over that time, a few tens of meters \
        from the last): the PUT's latency, and for the rides' drivers the time from the PUT to the `location` frame \
        on the rider's socket, frames lost (the server sends at most one a second per ride, so with positions a \
        second or more apart every one arrives) and frames at the wrong user. Sockets are held by the riders and \
        the rides' drivers (--all-sockets: every driver too). At the end the rides are completed and the drivers go \
        offline.
          limits            only the two floors of this machine (below). With --rate R: for --seconds, R \
        messages a second, each two durable single-row INSERTs (chat's send and notifications' feed entry are a \
        commit each) and a durable broker round trip acknowledged every 50 ms, as the services' consumers do: the CPU \
        of PostgreSQL and RabbitMQ per message, what the path's guarantees cost those two servers with nothing else.

        Every scenario ends by measuring two floors of this machine, one operation at a time: a durable RabbitMQ \
        round trip (publish with confirm to a quorum queue, consume, ack; account from TEST_AMQP_URL or \
        BENCH_AMQP_URL) and a durable single-row PostgreSQL INSERT (synchronous_commit on, in a database made anew \
        through TEST_POSTGRES_URL or BENCH_POSTGRES_URL). Results are also given as multiples of these floors. \
        Latency percentiles come from HDR histograms at microsecond resolution.

        Run it (the system with its gateway on :8080, then the floors' URLs):
          scripts/up
          eval "$(scripts/infra env)"
          swift build -c release --product load
          .build/release/load campus --students 200 --seconds 60
          .build/release/load chat --sockets 200 --seconds 30
          .build/release/load rides --drivers 2000 --rides 50 --seconds 60
          .build/release/load limits
          .build/release/load limits --rate 200 --seconds 30
        """

    func validate() throws {
        guard students >= 2, sockets >= 2, seconds > 0, (0.05...0.95).contains(delivererShare) else {
            throw ValidationError(
                "--students and --sockets need at least 2, --seconds more than 0, --deliverer-share 0.05 to 0.95")
        }
        guard pairingConcurrency >= 1 else { throw ValidationError("--pairing-concurrency needs at least 1") }
        guard pairingRate.map({ $0 > 0 }) ?? true else { throw ValidationError("--pairing-rate needs more than 0") }
        guard rate.map({ $0 > 0 }) ?? true else { throw ValidationError("--rate needs more than 0") }
        guard deleteAccountAfter.map({ (0..<seconds).contains($0) }) ?? true else {
            throw ValidationError("--delete-account-after needs a time within the measured phase (0 to --seconds)")
        }
        guard rides >= 1, drivers >= rides, positionEvery >= 1 else {
            throw ValidationError("--rides needs at least 1, --drivers at least as many, --position-every at least 1 s")
        }
    }

    var measuresLimits: Bool { !skipsLimits }

    /// How many students sign up for the scenario.
    var population: Int {
        switch scenario {
        case .campus: students
        case .chat: sockets - sockets % 2
        case .rides: drivers + rides
        case .limits: 0
        }
    }

    var delivererCount: Int { max(1, Int((Double(students) * delivererShare).rounded())) }
}
