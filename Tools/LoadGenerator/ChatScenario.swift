import Foundation
import NIOConcurrencyHelpers

/// `load chat --sockets 200`: as many students holding a socket, paired by a real delivery (check-in, order for
/// that run, offer on the socket, accept), so that each pair has an open conversation. Then every student sends
/// their partner a message every `--message-interval` seconds (0: the next as soon as the last POST returned)
/// for the run's length, or with `--rate` the students in turn send as many a second in all, each at its time however
/// many are still unanswered (an open loop: an offered load that means the same whatever the server answers): the
/// time from POST to arrival on the partner's socket, and messages delivered a second.
/// With `--delete-account-after`, a student who is not chatting deletes their account during the run.
struct ChatScenario {
    let options: LoadOptions
    let population: Population
    /// Records the pairing and the clean-up, apart from the measured chat.
    let setUp: StudentActions
    let actions: StudentActions

    struct Pair: Sendable {
        var deliverer: Student
        var orderer: Student
        var runId: String
        var matchId: String
        var conversationId: String
    }

    /// Pairs the students (the set-up, with its own CPU time printed).
    func pairUp() async -> [Pair] {
        let cpuAtStart = ProcessCPU.sample(also: ["load"])
        let pairs = await makePairs()
        let cpu = ProcessCPU.sample(also: ["load"]).since(cpuAtStart)
        print("chat: \(pairs.count) conversations open between \(pairs.count * 2) students")
        if !pairs.isEmpty {
            // The set-up's cost: what a change to the pairing path saves shows here even where latencies are noisy.
            let perPair = cpu.sorted { $0.value > $1.value }.map {
                "\($0.key) \(format($0.value * 1000 / Double(pairs.count)))"
            }
            let total = format(cpu.values.reduce(0, +) * 1000 / Double(pairs.count))
            print(
                "  CPU ms per pair made, by process (the load generator included): \(perPair.joined(separator: ", ")); all \(total)"
            )
        }
        return pairs
    }

    /// The measured phase: the pairs chat for the run's length; returns the seconds it ran.
    func chat(_ pairs: [Pair]) async -> Double {
        actions.measurements.startTimeline()
        let start = Stopwatch.now()
        let end = start + options.seconds
        await withTaskGroup(of: Void.self) { group in
            if let after = options.deleteAccountAfter {
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(Int((start + after - Stopwatch.now()) * 1000)))
                    await actions.signUpAndDeleteAccount()
                }
            }
            if let rate = options.rate {
                group.addTask { await offering(rate, in: pairs, from: start, until: end) }
                return
            }
            for pair in pairs {
                group.addTask {
                    await chatting(pair.deliverer, to: pair.orderer.id, in: pair.conversationId, until: end)
                }
                group.addTask {
                    await chatting(pair.orderer, to: pair.deliverer.id, in: pair.conversationId, until: end)
                }
            }
        }
        return Stopwatch.now() - start
    }

    /// Completes every pair's match and checks the deliverer out: the clean-up, once what was sent has arrived.
    func finish(_ pairs: [Pair]) async {
        await withTaskGroup(of: Void.self) { group in
            for pair in pairs {
                group.addTask {
                    await setUp.complete(pair.deliverer, match: pair.matchId)
                    await setUp.complete(pair.orderer, match: pair.matchId)
                    await setUp.checkOut(pair.deliverer, run: pair.runId)
                }
            }
        }
    }

    private func chatting(_ sender: Student, to partnerId: String, in conversationId: String, until end: Double) async {
        var number = 0
        // NB: each sender starts at a random point of its first interval, so that the rate offered is the same from the
        // first second (all at once, the phase would open with a burst of one message from everyone).
        if options.messageInterval > 0 {
            try? await Task.sleep(for: .milliseconds(Int.random(in: 0...Int(options.messageInterval * 1000))))
        }
        while Stopwatch.now() < end {
            number += 1
            _ = await actions.send(sender, to: partnerId, in: conversationId, text: "Viesti \(number) 🙂")
            if options.messageInterval > 0 {
                let pause = Double.random(in: options.messageInterval * 0.5...options.messageInterval * 1.5)
                try? await Task.sleep(for: .milliseconds(Int(pause * 1000)))
            }
        }
    }

    /// `rate` messages a second in all from `start` to `end`: the `n`th at `start + n / rate`, from each side of each
    /// pair in turn, sent at its time whether or not the ones before have been answered.
    private func offering(_ rate: Double, in pairs: [Pair], from start: Double, until end: Double) async {
        let senders = pairs.flatMap { pair in
            [
                (pair.deliverer, pair.orderer.id, pair.conversationId),
                (pair.orderer, pair.deliverer.id, pair.conversationId),
            ]
        }
        guard !senders.isEmpty else { return }
        await withDiscardingTaskGroup { group in
            var number = 0
            while true {
                let due = start + Double(number) / rate
                guard due < end else { return }
                if due > Stopwatch.now() {
                    try? await Task.sleep(for: .microseconds(Int((due - Stopwatch.now()) * 1_000_000)))
                }
                let (sender, partnerId, conversationId) = senders[number % senders.count]
                let text = "Viesti \(number / senders.count + 1) 🙂"
                group.addTask { _ = await actions.send(sender, to: partnerId, in: conversationId, text: text) }
                number += 1
            }
        }
    }

    /// Pairs each two students: `--pairing-concurrency` pairs in flight, the next begun as one ends (a closed loop,
    /// which keeps the machine as busy as it can be), or with `--pairing-rate` one begun at each of its times (an open
    /// loop, a given load). Prints how long it took.
    private func makePairs() async -> [Pair] {
        let count = population.students.count / 2
        let start = Stopwatch.now()
        defer {
            let seconds = Stopwatch.now() - start
            print("  pairs made in \(format(seconds)) s: \(format(Double(count) / seconds)) a second")
        }
        if let rate = options.pairingRate {
            return await withTaskGroup(of: Pair?.self) { group in
                for index in 0..<count {
                    let due = start + Double(index) / rate
                    if due > Stopwatch.now() {
                        try? await Task.sleep(for: .milliseconds(Int((due - Stopwatch.now()) * 1000)))
                    }
                    group.addTask { await pair(number: index) }
                }
                return await group.reduce(into: []) { made, pair in if let pair { made.append(pair) } }
            }
        }
        let next = NIOLockedValueBox(0)
        return await withTaskGroup(of: [Pair].self) { group in
            for _ in 0..<options.pairingConcurrency {
                group.addTask {
                    var made: [Pair] = []
                    while true {
                        let index = next.withLockedValue { value -> Int in
                            defer { value += 1 }
                            return value
                        }
                        guard index < count else { return made }
                        if let pair = await pair(number: index) {
                            made.append(pair)
                        }
                    }
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
    }

    /// The `number`th pair, of students `2 number` and `2 number + 1`: the deliverer checks in (one seat), the orderer
    /// orders for that run, the deliverer accepts the offer, and both wait for the conversation.
    private func pair(number: Int) async -> Pair? {
        let (deliverer, orderer) = (population.students[2 * number], population.students[2 * number + 1])
        let restaurant = population.restaurants[number % population.restaurants.count]
        let destination = population.buildings[number % population.buildings.count]
        guard
            let runId = await setUp.checkIn(
                deliverer, at: restaurant, to: destination, capacity: 1, minutes: Int(options.seconds / 60) + 10),
            let orderId = await setUp.order(orderer, from: restaurant, to: destination, run: runId),
            let offer = await deliverer.mailbox.next(
                timeout: 30, where: { $0.data.id("orderId") == orderId && $0.type == "offer.made" }),
            let offerId = offer.data.id("offerId"),
            let matchId = await setUp.accept(deliverer, offer: offerId),
            let conversation = await setUp.conversation(deliverer, match: matchId),
            await setUp.conversation(orderer, match: matchId) != nil
        else {
            setUp.measurements.count("pairs that could not be made")
            return nil
        }
        return Pair(
            deliverer: deliverer, orderer: orderer, runId: runId, matchId: matchId, conversationId: conversation.id)
    }
}
