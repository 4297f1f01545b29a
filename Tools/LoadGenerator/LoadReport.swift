import Foundation

/// The printed result of a run: operations, the paths through the system, errors, what was lost or repeated,
/// and the machine's floors with each main figure as a multiple of them.
struct LoadReport {
    let options: LoadOptions
    let measurements: Measurements
    let setUp: Measurements
    let ledger: Ledger
    let students: [Student]
    /// The students who held a socket.
    let socketHolders: [Student]
    let undeliveredEntries: Int
    let elapsed: Double
    /// Seconds after the measured phase until the last confirmed message arrived (or arrivals stopped).
    let drainSeconds: Double
    /// CPU seconds each process of the path used over the measured phase and the drain.
    let cpu: [String: Double]
    /// Context switches of each process of the path over the same time.
    let switches: [String: Double]
    /// What PostgreSQL and RabbitMQ counted over the measured phase and the drain, where they could be read.
    let counters: PathCounters?
    let limits: MachineLimits?

    func print() {
        let latencies = measurements.latencies
        let paths = Ledger.paths
        Swift.print(
            "\n== \(options.scenario.rawValue): \(students.count) students, measured phase \(format(elapsed)) s ==")
        Swift.print("\noperations through the gateway (ms; ×RT and ×INS: the p50 as a multiple of the floors below)")
        table(latencies.filter { !paths.contains($0.key) }, setUp: false)
        Swift.print("\npaths through the system (ms)")
        table(latencies.filter { paths.contains($0.key) }, setUp: false)
        let setUpLatencies = setUp.latencies.filter { $0.key != "POST /v1/auth/signup" }
        if !setUpLatencies.isEmpty {
            Swift.print("\nset-up and clean-up, outside the measured phase (ms)")
            table(setUpLatencies, setUp: true)
        }
        errors()
        slowSeconds()
        integrity()
        if options.scenario == .rides { positions() }
        processes()
        serverCounters()
        let counters = measurements.counters.merging(setUp.counters) { $0 + $1 }
        if !counters.isEmpty {
            Swift.print("\nflow")
            for (name, value) in counters.sorted(by: { $0.key < $1.key }) { Swift.print("  \(name): \(value)") }
            Swift.print(
                "  orders placed: \(ledger.ordersPlaced), of which offered to a deliverer: \(ledger.ordersOffered)")
        }
        if let limits {
            Self.printLimits(limits)
            ratios(limits, latencies: latencies)
        }
    }

    private func table(_ latencies: [String: Distribution], setUp: Bool) {
        let width = max(44, latencies.keys.map(\.count).max() ?? 0)
        Swift.print(
            "  " + "operation".padding(toLength: width, withPad: " ", startingAt: 0)
                + "  count    per s     p50     p90     p99    ×RT   ×INS")
        for (name, distribution) in latencies.sorted(by: { $0.key < $1.key }) {
            var line = "  " + name.padding(toLength: width, withPad: " ", startingAt: 0)
            line +=
                pad(String(distribution.count), 7) + pad(setUp ? "" : format(Double(distribution.count) / elapsed), 9)
            line += pad(milliseconds(distribution.median), 8) + pad(milliseconds(distribution.percentile(90)), 8)
            line += pad(milliseconds(distribution.percentile(99)), 8)
            if let limits {
                line += pad(format(distribution.median / limits.brokerRoundTrip.median), 7)
                line += pad(format(distribution.median / limits.insert.median), 7)
            }
            Swift.print(line)
        }
    }

    private func errors() {
        let errors = measurements.errors.merging(setUp.errors) { $0 + $1 }
        Swift.print("\nerrors by operation and status" + (errors.isEmpty ? ": none" : ""))
        for (name, count) in errors.sorted(by: { $0.key < $1.key }) { Swift.print("  \(name): \(count)") }
    }

    /// The seconds in which operations and paths were slow: whether a tail is spread out or comes in bursts. A
    /// second is listed when its p99 (over every operation and path that ended in it) is over the threshold; how
    /// many single requests were over it is counted apart.
    private func slowSeconds() {
        let timeline = measurements.timeline
        let threshold = Measurements.slowSeconds
        let slow = timeline.filter { $0.1.p99 > threshold }
        let overThreshold = timeline.map(\.1.slow).reduce(0, +)
        let secondsWithOne = timeline.filter { $0.1.slow > 0 }.count
        Swift.print(
            "\nseconds of the measured phase with p99 over \(milliseconds(threshold)) ms"
                + (slow.isEmpty ? ": none" : ": \(slow.count) of \(timeline.count)"))
        Swift.print(
            "  single operations over \(milliseconds(threshold)) ms: \(overThreshold) of "
                + "\(timeline.map(\.1.operations).reduce(0, +)), in \(secondsWithOne) of \(timeline.count) seconds")
        guard !slow.isEmpty else { return }
        let idleShares = measurements.cpuSeconds.values.filter { $0.machine.total > 0 }
            .map { $0.machine.idle / $0.machine.total }.sorted()
        if !idleShares.isEmpty {
            Swift.print(
                "  (beside them: the machine was \(Int((idleShares[idleShares.count / 2] * 100).rounded())) % idle in the"
                    + " phase's median second)")
        }
        let clock = DateFormatter()
        clock.dateFormat = "HH:mm:ss"
        clock.timeZone = TimeZone(identifier: "UTC")
        let start = measurements.startDate
        for (second, tally) in slow.sorted(by: { $0.1.p99 > $1.1.p99 }).prefix(12).sorted(by: { $0.0 < $1.0 }) {
            Swift.print(
                "  second \(pad(String(second), 4)) (\(clock.string(from: start + Double(second))) UTC): p99 "
                    + "\(milliseconds(tally.p99)) ms, \(pad(String(tally.slow), 5)) of \(pad(String(tally.operations), 5)) over, "
                    + "slowest \(milliseconds(tally.slowest)) ms")
            Swift.print(
                "    over: "
                    + tally.slowByName.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }
                    .joined(separator: ", "))
            if let cpu = measurements.cpuSeconds[second] { Swift.print("    " + Self.describe(cpu)) }
        }
    }

    /// A second's CPU time: the processes that used the most, and what the machine had left.
    private static func describe(_ cpu: Measurements.CPUSecond) -> String {
        let busiest = cpu.processes.filter { $0.value >= 0.01 }.sorted { $0.value > $1.value }.prefix(7)
        let total = max(cpu.machine.total, 0.001)
        return "CPU s that second: " + busiest.map { "\($0.key) \(format($0.value))" }.joined(separator: ", ")
            + "; the machine \(Int((cpu.machine.idle / total * 100).rounded())) % idle, "
            + "\(Int((cpu.machine.stolen / total * 100).rounded())) % stolen"
    }

    private func integrity() {
        let tallies = socketHolders.map(\.socket.state)
        let connects = tallies.map(\.connects).reduce(0, +)
        let missing = tallies.map(\.missing).reduce(0, +)
        let repeated = tallies.map(\.repeated).reduce(0, +)
        let messages = ledger.messages
        Swift.print(options.scenario == .rides ? "\nfeeds: lost or repeated" : "\nfeeds and chat: lost or repeated")
        Swift.print(
            "  sockets \(socketHolders.count), connections \(connects) "
                + "(\(connects - socketHolders.count) reconnects with after=), "
                + "feed entries received \(tallies.map(\.lastSeq).reduce(0, +))")
        Swift.print("  seq gaps (entries skipped on a socket): \(missing); seq repeats: \(repeated)")
        Swift.print(
            "  entries in the feeds after the last seq a socket saw (never arrived live): \(undeliveredEntries)")
        guard options.scenario != .rides else { return }
        Swift.print(
            "  chat messages sent \(messages.sent): arrived exactly once \(messages.arrivedOnce), lost \(messages.lost), "
                + "duplicated \(messages.duplicated), at the wrong user \(messages.misdelivered)")
        Swift.print("  time after the measured phase until the last message arrived: \(format(drainSeconds)) s")
        let messagesPerSecond =
            Double(measurements.latencies[Ledger.messageToSocket]?.count ?? 0) / (elapsed + drainSeconds)
        Swift.print("  messages delivered to sockets: \(format(messagesPerSecond)) a second (measured phase and drain)")
    }

    /// CPU time by process, in all and for each message delivered to a socket (the chat path's cost), or each feed
    /// entry a socket received where no chat message was sent.
    private func processes() {
        let messages = measurements.latencies[Ledger.messageToSocket]?.count ?? 0
        let entries = socketHolders.map(\.socket.state).map(\.lastSeq).reduce(0, +)
        let (unit, count) = messages > 0 ? ("message delivered", messages) : ("feed entry received", Int(entries))
        Swift.print(
            "\nCPU time by process over the measured phase and the drain (the kernel's accounting, every process of "
                + "the name on this machine)")
        Swift.print("  process          CPU s   ms per \(unit)   context switches per \(unit)")
        func row(_ name: String, _ seconds: Double, _ switched: Double) {
            let perUnit = count > 0 ? format(seconds * 1000 / Double(count)) : "-"
            let switchesPerUnit = count > 0 ? format(switched / Double(count)) : "-"
            Swift.print(
                "  \(name.padding(toLength: 15, withPad: " ", startingAt: 0))\(pad(format(seconds), 7))   "
                    + "\(pad(perUnit, 6))   \(switchesPerUnit)")
        }
        for (name, seconds) in cpu.sorted(by: { $0.value > $1.value }) { row(name, seconds, switches[name] ?? 0) }
        row("all", cpu.values.reduce(0, +), switches.values.reduce(0, +))
    }

    /// What the servers counted, in all and for each message delivered (or feed entry received).
    private func serverCounters() {
        guard let counters else { return }
        let messages = measurements.latencies[Ledger.messageToSocket]?.count ?? 0
        let entries = Int(socketHolders.map(\.socket.state).map(\.lastSeq).reduce(0, +))
        let (unit, count) = messages > 0 ? ("message delivered", messages) : ("feed entry received", entries)
        Swift.print("\nwhat PostgreSQL and RabbitMQ counted over the measured phase and the drain")
        Swift.print("  counter            total   per \(unit)")
        for (key, meaning) in PathCounters.described {
            guard let value = counters.values[key] else { continue }
            let perUnit = count > 0 ? format(value / Double(count)) : "-"
            Swift.print(
                "  \(key.padding(toLength: 15, withPad: " ", startingAt: 0))\(pad(format(value), 9))   "
                    + "\(pad(perUnit, 7))   \(meaning)")
        }
    }

    private func positions() {
        let positions = ledger.positions
        let frames = measurements.latencies[Ledger.positionToSocket]?.count ?? 0
        Swift.print("\nrides: positions of the rides' drivers to their riders' sockets")
        Swift.print(
            "  positions sent \(positions.sent): arrived exactly once \(positions.arrivedOnce), lost \(positions.lost), "
                + "duplicated \(positions.duplicated), at the wrong user \(positions.misdelivered), "
                + "frames of no position sent \(positions.unknown)")
        Swift.print("  frames read before their PUT was answered: \(positions.beforeAnswer) of \(frames)")
        Swift.print(
            "  shortest time between two frames of one ride: "
                + (positions.shortestGap.map { "\(format($0)) s" } ?? "none")
                + " (the server sends at most one a second)")
        Swift.print("  time after the measured phase until the last position arrived: \(format(drainSeconds)) s")
    }

    private func ratios(_ limits: MachineLimits, latencies: [String: Distribution]) {
        Swift.print("\nmain figures as multiples of the floors (RT: broker round trip p50, INS: INSERT p50)")
        let names = [
            Ledger.messageToSocket, Ledger.orderToOffer, "POST /v1/conversations/{id}/messages", "POST /v1/orders",
            Ledger.positionToSocket, RidesScenario.positionOperation, RidesScenario.ridePositionOperation,
        ]
        for name in names {
            guard let distribution = latencies[name], distribution.count > 0 else { continue }
            Swift.print(
                "  \(name): p50 \(milliseconds(distribution.median)) ms = \(format(distribution.median / limits.brokerRoundTrip.median)) RT"
                    + " = \(format(distribution.median / limits.insert.median)) INS; p99 \(milliseconds(distribution.percentile(99))) ms"
                    + " = \(format(distribution.percentile(99) / limits.brokerRoundTrip.median)) RT")
        }
    }

    static func printSignUp(_ measurements: Measurements, students: Int, seconds: Double) {
        let distribution = measurements.latencies["POST /v1/auth/signup"] ?? Distribution()
        Swift.print(
            "signed up \(students) students in \(format(seconds)) s (\(format(Double(students) / seconds)) a second); "
                + "POST /v1/auth/signup p50 \(milliseconds(distribution.median)) ms, p90 \(milliseconds(distribution.percentile(90))) ms, "
                + "p99 \(milliseconds(distribution.percentile(99))) ms")
    }

    static func printLimits(_ limits: MachineLimits) {
        func line(_ name: String, _ distribution: Distribution) {
            Swift.print(
                "  \(name.padding(toLength: 60, withPad: " ", startingAt: 0)) \(pad(String(distribution.count), 5))"
                    + " p50 \(pad(milliseconds(distribution.median), 7)) p90 \(pad(milliseconds(distribution.percentile(90)), 7))"
                    + " p99 \(pad(milliseconds(distribution.percentile(99)), 7)) ms")
        }
        Swift.print("\nfloors of this machine, one operation at a time")
        line("RabbitMQ publish → confirm (persistent, quorum queue)", limits.brokerConfirm)
        line("RabbitMQ round trip: publish → confirm → consume → ack (RT)", limits.brokerRoundTrip)
        line("PostgreSQL single-row INSERT, synchronous_commit on (INS)", limits.insert)
    }

    static func printCost(messages: Int, seconds: Double, cpu: [String: Double]) {
        Swift.print(
            "\nwhat a chat message's guarantees cost the servers alone: \(messages) messages in \(format(seconds)) s, "
                + "each two durable single-row INSERTs and a durable broker round trip")
        Swift.print("  process          CPU s   ms per message")
        for name in ["postgres", "beam.smp"] {
            let used = cpu[name] ?? 0
            Swift.print(
                "  \(name.padding(toLength: 14, withPad: " ", startingAt: 0)) \(pad(format(used), 7))"
                    + "   \(format(used * 1000 / Double(max(messages, 1))))")
        }
        let both = (cpu["postgres"] ?? 0) + (cpu["beam.smp"] ?? 0)
        Swift.print(
            "  both           \(pad(format(both), 7))   \(format(both * 1000 / Double(max(messages, 1))))")
    }
}

private func pad(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: max(0, width - text.count)) + text
}

func format(_ value: Double) -> String {
    value >= 100
        ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
}

private func milliseconds(_ seconds: Double) -> String {
    format(seconds * 1000)
}
