import Foundation
import Logging
import NIOConcurrencyHelpers

/// `load campus`: a campus of students on the bundled Helsinki places for a while. Deliverers search for a
/// restaurant, check in heading to a building, answer the offers on their socket (most accept), chat with the
/// orderer, deliver and complete, and check in again elsewhere when their seats are done. Orderers search for their
/// building, look at the restaurants with open runs, order (often for a run they picked), wait for the match on
/// their socket, chat and complete. Now and then a student logs in again, and every socket is dropped and resumed
/// with `after=` the last seq it saw.
struct CampusScenario {
    let options: LoadOptions
    let population: Population
    let actions: StudentActions
    let measurements: Measurements

    func run() async {
        let deliverers = Array(population.students.prefix(options.delivererCount))
        let orderers = Array(population.students.dropFirst(options.delivererCount))
        let end = Stopwatch.now() + options.seconds
        print("campus: \(deliverers.count) deliverers and \(orderers.count) orderers for \(Int(options.seconds)) s")
        await withTaskGroup(of: Void.self) { group in
            for deliverer in deliverers {
                group.addTask { await delivering(deliverer, until: end) }
            }
            for orderer in orderers {
                group.addTask { await ordering(orderer, until: end) }
            }
            if options.loginsPerSecond > 0 {
                group.addTask { await loggingIn(until: end) }
            }
        }
    }

    private var runMinutes: Int { Int(options.seconds / 60) + 5 }

    private func delivering(_ deliverer: Student, until end: Double) async {
        // Students do not all arrive at once: check-ins spread over the first tenth of the run.
        try? await Task.sleep(for: .milliseconds(Int(Double.random(in: 0...options.seconds * 0.1) * 1000)))
        while Stopwatch.now() < end {
            let restaurant = population.restaurants.randomElement()!
            let destination = population.buildings.randomElement()!
            await actions.search(deliverer, typing: restaurant.name, kind: "restaurant")
            let capacity = Int.random(in: 1...3)
            guard
                let runId = await actions.checkIn(
                    deliverer, at: restaurant, to: destination, capacity: capacity, minutes: runMinutes)
            else {
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            let delivered = NIOLockedValueBox(0)
            await withTaskGroup(of: Void.self) { group in
                while Stopwatch.now() < end, delivered.withLockedValue({ $0 }) < capacity {
                    guard let offer = await actions.nextOffer(deliverer, timeout: 1),
                        let offerId = offer.data.id("offerId")
                    else { continue }
                    guard offer.data.id("runId") == runId else {
                        // An offer for the run this deliverer left: it was withdrawn when they checked out.
                        continue
                    }
                    group.addTask {
                        if await answer(offerId, by: deliverer) { delivered.withLockedValue { $0 += 1 } }
                    }
                }
                await group.waitForAll()
            }
            await actions.checkOut(deliverer, run: runId)
        }
    }

    /// Thinks, then accepts (85 %) and delivers, or declines. True when the delivery was completed.
    private func answer(_ offerId: String, by deliverer: Student) async -> Bool {
        try? await Task.sleep(for: .milliseconds(Int.random(in: 300...2000)))
        guard Double.random(in: 0..<1) < 0.85 else {
            await actions.decline(deliverer, offer: offerId)
            return false
        }
        guard let matchId = await actions.accept(deliverer, offer: offerId) else { return false }
        guard let conversation = await actions.conversation(deliverer, match: matchId) else {
            await actions.complete(deliverer, match: matchId)
            return true
        }
        await actions.chat(
            deliverer, with: conversation.partnerId, in: conversation.id, count: options.messagesPerSide,
            pause: 0.3...1.5)
        await actions.complete(deliverer, match: matchId)
        return true
    }

    private func ordering(_ orderer: Student, until end: Double) async {
        try? await Task.sleep(for: .milliseconds(Int(Double.random(in: 0...options.seconds * 0.15) * 1000)))
        while Stopwatch.now() < end {
            try? await Task.sleep(for: .milliseconds(Int.random(in: 1000...4000)))
            let destination = population.buildings.randomElement()!
            await actions.search(orderer, typing: destination.name, kind: "building")
            let (restaurant, runId) = await chooseRestaurant(orderer, near: destination)
            guard let orderId = await actions.order(orderer, from: restaurant, to: destination, run: runId) else {
                continue
            }
            guard let matchId = await actions.waitForMatch(orderer, order: orderId, timeout: 45) else {
                measurements.count("orders not matched in 45 s")
                await actions.cancel(orderer, order: orderId)
                continue
            }
            measurements.count("orders matched")
            guard let conversation = await actions.conversation(orderer, match: matchId) else {
                await actions.complete(orderer, match: matchId)
                continue
            }
            await actions.chat(
                orderer, with: conversation.partnerId, in: conversation.id, count: options.messagesPerSide,
                pause: 0.3...1.5)
            await actions.complete(orderer, match: matchId)
            measurements.count("deliveries completed")
        }
    }

    /// A restaurant with free seats among the popular ones, and in three cases of five the nearest run there with
    /// a free seat; otherwise any popular restaurant, matched automatically.
    private func chooseRestaurant(_ orderer: Student, near destination: CampusPlace) async -> (CampusPlace, String?) {
        let fallback = population.restaurants.randomElement()!
        guard let list = await actions.gateway.call(.GET, "/v1/restaurants", token: orderer.token), list.isSuccess
        else {
            return (fallback, nil)
        }
        let open = Set(
            list.json.objects("restaurants").filter { ($0["freeSeats"] as? Int ?? 0) > 0 }
                .compactMap { $0.object("restaurant")?.id("id") })
        guard let restaurant = population.restaurants.filter({ open.contains($0.id) }).randomElement() else {
            return (fallback, nil)
        }
        guard Double.random(in: 0..<1) < 0.6,
            let runs = await actions.gateway.call(
                .GET, "/v1/restaurants/\(restaurant.id)/runs?lat=\(destination.latitude)&lon=\(destination.longitude)",
                operation: "GET /v1/restaurants/{id}/runs", token: orderer.token),
            runs.isSuccess
        else { return (restaurant, nil) }
        let free = runs.json.objects("runs").first { ($0["held"] as? Int ?? 0) < ($0["capacity"] as? Int ?? 0) }
        return (restaurant, free?.id("id"))
    }

    private func loggingIn(until end: Double) async {
        let interval = 1 / options.loginsPerSecond
        while Stopwatch.now() < end {
            try? await Task.sleep(for: .milliseconds(Int(interval * 1000)))
            await actions.logIn(population.students.randomElement()!)
        }
    }
}
