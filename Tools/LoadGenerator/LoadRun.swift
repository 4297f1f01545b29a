import Foundation
import Logging

/// One run of a scenario: sign-up of the population, the measured phase, the checks of what arrived, the
/// machine's floors, and the report.
struct LoadRun {
    let options: LoadOptions
    let logger: Logger

    init(options: LoadOptions) {
        self.options = options
        var logger = Logger(label: "load")
        logger.logLevel = .error
        self.logger = logger
    }

    func run() async throws {
        guard options.scenario != .limits else {
            if let rate = options.rate {
                await PathCounters.warnAboutLeftovers()
                let (messages, cpu) = try await MachineLimits.measureCost(
                    rate: rate, seconds: options.seconds, logger: logger)
                return LoadReport.printCost(messages: messages, seconds: options.seconds, cpu: cpu)
            }
            return LoadReport.printLimits(
                try await MachineLimits.measure(samples: options.limitSamples, logger: logger))
        }
        if options.measuresLimits { _ = try MachineLimits.amqpURL() }
        let measurements = Measurements()
        let setUpMeasurements = Measurements()
        let gateway = Gateway(
            baseURL: options.gateway, measurements: measurements, connections: options.httpConnections)
        defer { Task { [gateway] in try? await gateway.shutdown() } }
        let setUpGateway = gateway.recording(into: setUpMeasurements)
        guard let campuses = await setUpGateway.call(.GET, "/v1/campuses"), campuses.isSuccess else {
            throw LoadError("no gateway answers at \(options.gateway): start the system with scripts/up")
        }
        guard let campus = campuses.json.objects("campuses").first(where: { $0.string("domain") == Population.campus }),
            let center = campus["center"] as? [String: Any],
            let latitude = center["latitude"] as? Double, let longitude = center["longitude"] as? Double
        else { throw LoadError("the system knows no campus \(Population.campus)") }
        let ledger = Ledger(measurements: measurements)
        let runTag = "\(Int(Date().timeIntervalSince1970)).\(UUID().uuidString.prefix(4).lowercased())"

        print(
            "signing up \(options.population) students through \(options.gateway) (\(options.signupConcurrency) at a time)"
        )
        let signUpStart = Stopwatch.now()
        let population = try await Population.signUp(
            count: options.population, near: (latitude, longitude), concurrency: options.signupConcurrency,
            runTag: runTag, gateway: setUpGateway,
            ledger: ledger, measurements: measurements, logger: logger)
        let signUpSeconds = Stopwatch.now() - signUpStart
        LoadReport.printSignUp(setUpMeasurements, students: population.students.count, seconds: signUpSeconds)
        // NB: access tokens last 15 minutes unless the system says otherwise (ACCESS_TOKEN_SECONDS).
        if signUpSeconds > 600 {
            print("warning: sign-up took over 10 minutes; the first students' access tokens may expire during the run")
        }

        let reconnectEvery = options.scenario == .campus && options.reconnectEvery > 0 ? options.reconnectEvery : nil
        let actions = StudentActions(gateway: gateway, ledger: ledger, measurements: measurements)
        let setUp = StudentActions(gateway: setUpGateway, ledger: ledger, measurements: setUpMeasurements)
        let rides =
            options.scenario == .rides
            ? RidesScenario(
                options: options, population: population, setUp: setUp, actions: actions,
                center: .init(lat: latitude, lon: longitude)) : nil
        let holders = rides?.socketHolders ?? population.students
        let sockets = await population.openSockets(of: holders, reconnectEvery: reconnectEvery)
        let chat =
            options.scenario == .chat
            ? ChatScenario(options: options, population: population, setUp: setUp, actions: actions) : nil
        // NB: the chat's pairs are made before its CPU time and counters start, so that they are the messages' alone.
        let pairs = await chat?.pairUp() ?? []
        await PathCounters.warnAboutLeftovers()
        let cpuAtStart = ProcessCPU.sample(switches: true)
        let countersAtStart = await PathCounters.sample()
        measurements.startTimeline()
        let sampler = Task { await Self.sampleCPU(into: measurements) }
        let start = Stopwatch.now()
        let elapsed: Double
        let drain: Double
        switch options.scenario {
        case .campus:
            await CampusScenario(options: options, population: population, actions: actions, measurements: measurements)
                .run()
            elapsed = Stopwatch.now() - start
            drain = await drainArrivals(ledger)
        case .rides:
            guard let rides, let started = await rides.start() else {
                throw LoadError("no ride could be set up: see the errors of POST /v1/rides and its accept")
            }
            elapsed = await rides.drive(started.drivers)
            drain = await drainArrivals(ledger)
            await rides.finish(drivers: started.drivers, rides: started.rides)
        default:
            elapsed = await chat?.chat(pairs) ?? 0
            drain = await drainArrivals(ledger)
        }
        sampler.cancel()
        let cpuAtEnd = ProcessCPU.sample(switches: true)
        let cpu = cpuAtEnd.since(cpuAtStart)
        var counters: PathCounters?
        if let countersAtStart {
            // NB: the servers' counters of the phase's last seconds come late (`PathCounters`).
            try? await Task.sleep(for: .seconds(6))
            counters = await PathCounters.since(countersAtStart)
        }
        let undelivered = await entriesNotOnSockets(holders, gateway: setUpGateway)
        // NB: after the check of what arrived, so that the entries of the clean-up, just made, are not counted in it.
        await chat?.finish(pairs)
        await population.closeSockets(sockets)

        let limits =
            options.measuresLimits
            ? try await MachineLimits.measure(samples: options.limitSamples, logger: logger) : nil
        LoadReport(
            options: options, measurements: measurements, setUp: setUpMeasurements, ledger: ledger,
            students: population.students, socketHolders: holders, undeliveredEntries: undelivered, elapsed: elapsed,
            drainSeconds: drain, cpu: cpu, switches: cpuAtEnd.switchesSince(cpuAtStart), counters: counters,
            limits: limits
        ).print()
    }

    /// Samples every process's CPU time and the machine's at the end of each second of the timeline, so that the
    /// report can tell of a slow second whether the cores were busy.
    private static func sampleCPU(into measurements: Measurements) async {
        var last = (ProcessCPU.sample(also: ["load"]), MachineCPU.sample())
        // NB: after the timeline starts again, the first sample spans only part of its second, and is not kept.
        var wholeSecond = true
        while !Task.isCancelled {
            let second = await measurements.endOfSecond()
            let now = (ProcessCPU.sample(also: ["load"]), MachineCPU.sample())
            if let second, wholeSecond {
                measurements.recordCPU(
                    second: second, .init(processes: now.0.since(last.0), machine: now.1.since(last.1)))
            }
            wholeSecond = second != nil
            last = now
        }
    }

    /// Gives what is still on its way time to arrive: until every message the chat confirmed and every position of
    /// a ride has, or none has for 5 s; then one more second for the rest of the feeds. Returns how long it took: a
    /// backlog shows here.
    private func drainArrivals(_ ledger: Ledger) async -> Double {
        let start = Stopwatch.now()
        var progress = (arrived: -1, at: start)
        while true {
            let (messages, positions) = (ledger.messages, ledger.positions)
            let now = Stopwatch.now()
            if messages.lost + positions.lost == 0 { break }
            if messages.arrivedOnce + positions.arrivedOnce != progress.arrived {
                progress = (messages.arrivedOnce + positions.arrivedOnce, now)
            } else if now - progress.at > 5 {
                break
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
        let drained = Stopwatch.now() - start
        try? await Task.sleep(for: .seconds(1))
        return drained
    }

    /// Asks the feed of every student for entries after the last seq its socket saw.
    private func entriesNotOnSockets(_ students: [Student], gateway: Gateway) async -> Int {
        await withTaskGroup(of: Int.self) { group in
            for (index, student) in students.enumerated() {
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(index * 5))
                    let after = student.socket.state.lastSeq
                    let answer = await gateway.call(
                        .GET, "/v1/notifications?after=\(after)&limit=500", operation: "GET /v1/notifications?after=",
                        token: student.token)
                    return answer?.json.objects("entries").count ?? 0
                }
            }
            return await group.reduce(0, +)
        }
    }
}
