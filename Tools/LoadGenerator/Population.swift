import Foundation
import Logging
import NIOConcurrencyHelpers
import TarrareClient

/// A student of the simulated campus, signed up for this run, with the socket and mailbox of their feed. The
/// socket sends offers, chat messages and positions to the ledger, and every entry to the mailbox.
final class Student: Sendable {
    let index: Int
    let id: String
    let email: String
    let password: String
    let token: String
    let mailbox: Mailbox
    let socket: FeedSocket

    init(
        index: Int, id: String, email: String, password: String, token: String, gateway: Gateway, ledger: Ledger,
        measurements: Measurements, logger: Logger
    ) {
        self.index = index
        self.id = id
        self.email = email
        self.password = password
        self.token = token
        let mailbox = Mailbox()
        self.mailbox = mailbox
        socket = FeedSocket(
            userId: id, measurements: measurements, logger: logger, url: { gateway.streamURL(token: token, after: $0) },
            handle: { event in
                switch event.type {
                case "location":
                    // A live frame, never waited for: it goes to the ledger alone.
                    if let rideId = event.data.id("rideId"), let lat = event.data["lat"] as? Double,
                        let lon = event.data["lon"] as? Double
                    {
                        ledger.positionArrived(
                            ride: rideId, lat: lat, lon: lon, on: id, at: event.receivedAt,
                            sinceStored: event.sinceStored)
                    }
                    return
                case "offer.made":
                    if let orderId = event.data.id("orderId") {
                        ledger.offerArrived(order: orderId, at: event.receivedAt)
                    }
                case "message.sent":
                    if let messageId = event.data.id("messageId") {
                        ledger.messageArrived(messageId, on: id, at: event.receivedAt, sinceStored: event.sinceStored)
                    }
                default:
                    break
                }
                mailbox.deliver(event)
            })
    }
}

/// A place of the bundled campus as the places API answers it.
struct CampusPlace: Sendable {
    var id: String
    var name: String
    var latitude: Double
    var longitude: Double
}

/// The students of one run: signed up through the gateway at the start (bcrypt makes this slow, so it is done
/// once and reported apart), each holding a socket whose entries go to the ledger and to their mailbox.
struct Population: Sendable {
    let students: [Student]
    let restaurants: [CampusPlace]
    let buildings: [CampusPlace]

    /// The campus whose students are simulated (the bundled one).
    static let campus = "helsinki.fi"

    /// Signs up `count` students `concurrency` at a time, then finds the restaurants and buildings nearest the
    /// campus centre.
    static func signUp(
        count: Int, near center: (latitude: Double, longitude: Double), concurrency: Int, runTag: String,
        gateway: Gateway, ledger: Ledger, measurements: Measurements,
        logger: Logger
    ) async throws -> Population {
        let next = NIOLockedValueBox(0)
        let students = try await withThrowingTaskGroup(of: [Student].self) { group in
            for _ in 0..<max(1, concurrency) {
                group.addTask {
                    var made: [Student] = []
                    while true {
                        let index = next.withLockedValue { value -> Int in
                            defer { value += 1 }
                            return value
                        }
                        guard index < count else { return made }
                        // A student who could not sign up (the system restarting) stays home; the run goes on.
                        if let student = try await signUp(
                            index: index, runTag: runTag, gateway: gateway, ledger: ledger, measurements: measurements,
                            logger: logger)
                        {
                            made.append(student)
                        }
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }.sorted { $0.index < $1.index }
        }
        guard students.count >= 2, let token = students.first?.token else {
            throw LoadError("fewer than two students could sign up: is the system up (scripts/up)?")
        }
        func nearest(_ kind: String, limit: Int) async throws -> [CampusPlace] {
            let path =
                "/v1/places/nearby?lat=\(center.latitude)&lon=\(center.longitude)&radius=1500&kind=\(kind)&limit=\(limit)"
            guard let answer = await gateway.call(.GET, path, operation: "GET /v1/places/nearby", token: token),
                answer.isSuccess
            else { throw LoadError("the places service did not answer \(path)") }
            return answer.json.objects("places").compactMap { place in
                guard let id = place.id("id"), let name = place.string("name"),
                    let latitude = place["latitude"] as? Double, let longitude = place["longitude"] as? Double
                else { return nil }
                return CampusPlace(id: id, name: name, latitude: latitude, longitude: longitude)
            }
        }
        // A day's custom gathers at a few places: the restaurants and buildings nearest the campus centre.
        let restaurants = try await nearest("restaurant", limit: 20)
        let buildings = try await nearest("building", limit: 25)
        guard !restaurants.isEmpty, !buildings.isEmpty else {
            throw LoadError(
                "no places near the campus centre: import data/helsinki-centre-places.geojson (scripts/up does)")
        }
        return Population(students: students, restaurants: restaurants, buildings: buildings)
    }

    /// One student signed up through the Swift package, as an app signs up (its retries after a 503 included).
    private static func signUp(
        index: Int, runTag: String, gateway: Gateway, ledger: Ledger, measurements: Measurements, logger: Logger
    ) async throws -> Student? {
        let email = "load.\(runTag).\(index)@\(campus)"
        let password = "Campus-\(UUID().uuidString.prefix(12))"
        let client = TarrareClient(serverURL: URL(string: gateway.baseURL)!, logger: logger)
        for attempt in 1...3 {
            let start = Stopwatch.now()
            do {
                let outcome = try await client.signUp(email: email, password: password, name: "Student \(index)")
                measurements.record("POST /v1/auth/signup", seconds: Stopwatch.now() - start)
                guard case .signedIn(let user) = outcome, let tokens = try await client.session.current() else {
                    throw LoadError("the campus asks sign-ups to prove their email: run the system without SMTP_URL")
                }
                return Student(
                    index: index, id: user.id.lowercased(), email: email, password: password,
                    token: tokens.accessToken, gateway: gateway, ledger: ledger, measurements: measurements,
                    logger: logger)
            } catch let error as LoadError {
                throw error
            } catch {
                let problem = TarrareClient.problem(of: error)
                if problem?.status == 409 {
                    throw LoadError("\(email) exists already: run tags must differ between runs")
                }
                measurements.recordError("POST /v1/auth/signup", problem.map { String($0.status) } ?? "\(error)")
            }
            try await Task.sleep(for: .seconds(attempt))
        }
        measurements.count("students who could not sign up")
        return nil
    }

    /// Opens the socket of each of `holders` and waits until all are up (or `timeout` passes); returns the tasks that
    /// hold them until `closeSockets()`.
    func openSockets(of holders: [Student], reconnectEvery: Double?, timeout: Double = 60) async -> [Task<Void, Never>]
    {
        let connected = NIOLockedValueBox(0)
        let tasks = holders.map { student in
            Task { await student.socket.run(reconnectEvery: reconnectEvery) { connected.withLockedValue { $0 += 1 } } }
        }
        let deadline = Stopwatch.now() + timeout
        while connected.withLockedValue({ $0 }) < holders.count, Stopwatch.now() < deadline {
            try? await Task.sleep(for: .milliseconds(100))
        }
        return tasks
    }

    func closeSockets(_ tasks: [Task<Void, Never>]) async {
        for student in students { student.socket.stop() }
        for task in tasks { await task.value }
    }
}

/// A failure that stops the run, with what to do about it.
struct LoadError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
