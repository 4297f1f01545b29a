import AsyncHTTPClient
import Contracts
import Delivery
import Foundation
import JWTKit
import Messaging
import NIOCore
import NIOHTTP1
import Postgres
import ServiceKit
import ServiceLifecycle
import TestSupport

/// The services started as real processes (the executables the test build made), each with a fresh database,
/// all on one fresh vhost, signing-key pair of their own. Stopped with SIGTERM at the end.
final class RunningSystem: @unchecked Sendable {
    let broker: TestBroker
    let privateKey: EdDSA.PrivateKey
    /// Made last in `init`, once nothing can throw: a client dropped without its shutdown stops the process.
    let http: HTTPClient
    var ports: [String: Int] = [:]
    private var processes: [ChildProcess] = []
    private let directory: URL
    private let keyFile: URL
    private var databases: [String: TestDatabase] = [:]

    static let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    static let repositoryRoot = TestService.repositoryRoot

    init() async throws {
        broker = try await TestBroker.make()
        privateKey = try EdDSA.PrivateKey()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "system-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        keyFile = directory.appendingPathComponent("jwt-public.pem")
        try privateKey.publicKey.pemRepresentation.write(to: keyFile, atomically: true, encoding: .utf8)
        http = HTTPClient(eventLoopGroupProvider: .singleton)
    }

    /// Starts `service` (known to the test as `name`, for a second replica) and waits until it is ready. A replica
    /// shares the database of the instance named `databaseOf`.
    func start(_ service: String, name: String? = nil, databaseOf: String? = nil) async throws {
        let name = name ?? service
        let shared = databaseOf.flatMap { databases[$0] }
        let database = if let shared { shared } else { try await TestDatabase.make(migrations: []) }
        databases[name] = database
        let port = try Self.freePort()
        var environment = ProcessInfo.processInfo.environment
        environment.merge(
            [
                "HTTP_PORT": String(port), "POSTGRES_URL": database.url, "AMQP_URL": broker.url,
                "POSTGRES_POOL_SIZE": "4",
                "JWT_PUBLIC_KEY_FILE": keyFile.path, "LOG_LEVEL": "warning", "SCHEDULER_INTERVAL_SECONDS": "0.1",
                "PUSH_GRACE_SECONDS": "60",
                // NB: offers last ten minutes, as in MatchingTestApp: a busy machine's steps outlast the 25 s default.
                "DELIVERY_OFFER_WINDOW_SECONDS": "600", "RIDES_OFFER_WINDOW_SECONDS": "600",
            ]
        ) { $1 }
        let log = directory.appendingPathComponent("\(name).log")
        processes.append(
            try ChildProcess(
                [Self.binaries.appendingPathComponent(service).path], environment: environment,
                standardOutput: .file(log.path), standardError: .file(log.path)))
        ports[name] = port
        do {
            try await eventually("\(name) ready", timeout: 60) {
                (try? await self.request(.GET, name, "/health/ready").status) == 200
            }
        } catch let failure as TestFailure {
            throw TestFailure("\(failure): \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        }
    }

    /// A port nothing listens on now: the kernel's choice for a socket bound to port 0.
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else { throw TestFailure("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs a command of an executable (`places import FILE`) against the service's database.
    func run(_ service: String, _ arguments: [String]) async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["POSTGRES_URL"] = databases[service]?.url
        environment["LOG_LEVEL"] = "warning"
        let (status, errors) = try await ChildProcess.run(
            [Self.binaries.appendingPathComponent(service).path] + arguments, environment: environment,
            capturing: .standardError)
        guard status == 0 else { throw TestFailure("\(service) \(arguments) failed: \(errors)") }
    }

    /// Publishes `match.accepted` and `match.opened` as matching would and returns the match id.
    func acceptMatch(orderer: UUID, deliverer: UUID) async throws -> UUID {
        let match = MatchParties(
            matchId: UUID(), orderId: UUID(), runId: UUID(), campus: "helsinki.fi", ordererId: orderer,
            ordererName: "Olli",
            delivererId: deliverer, delivererName: "Eero", restaurant: PlaceReference(placeId: UUID(), name: "Unicafe"),
            destination: PlaceReference(placeId: UUID(), name: "Porthania"))
        let opened = MatchOpened(
            matchId: match.matchId, flow: "delivery", campus: match.campus,
            members: [
                MatchMember(userId: orderer, name: match.ordererName, role: "orderer"),
                MatchMember(userId: deliverer, name: match.delivererName, role: "deliverer"),
            ],
            subject: "Soup to Porthania", version: 1)
        try await publish([MatchAccepted(match: match, version: 1), opened], as: "matching")
        return match.matchId
    }

    /// Publishes `events` as `producer` would, in one transaction of an outbox of the test's own, and returns once
    /// the broker has confirmed them all.
    func publish(_ events: [any Event], as producer: String) async throws {
        let outbox = try await TestDatabase.make(migrations: [PostgresMigrator.messagingDirectory])
        try await outbox.pool.transaction { connection in
            for event in events { try Outbox.append(event, on: connection) }
        }
        let relay = OutboxRelay(
            topology: Topology(service: producer, publishes: events.map { type(of: $0).type }), postgresURL: outbox.url,
            amqpURL: broker.url, status: BrokerStatus(), logger: TestEnvironment.logger)
        let group = ServiceGroup(services: [relay], logger: TestEnvironment.logger)
        let relaying = Task { try await group.run() }
        try await eventually("the events relayed as \(producer)") {
            try await outbox.pool.query("SELECT 1 FROM outbox_unsent").isEmpty
        }
        await group.triggerGracefulShutdown()
        try await relaying.value
    }

    func stop() async throws {
        for process in processes { process.signal(SIGTERM) }
        for process in processes { _ = await process.exitStatus() }
        try await http.shutdown()
        try? await broker.delete()
    }

    func token(_ userId: UUID, name: String, campus: String = "helsinki.fi") async throws -> String {
        try await accessToken(signedBy: privateKey, userId: userId, campus: campus, name: name)
    }

    struct Answer {
        var status: UInt
        var json: [String: Any]
    }

    /// One HTTP request to a service, with the token and JSON body given.
    func request(
        _ method: HTTPMethod, _ service: String, _ path: String, token: String? = nil, body: [String: Any]? = nil
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(ports[service]!)\(path)")
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body)))
        }
        let response = try await http.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 22)
        let json = (try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView))) as? [String: Any] ?? [:]
        return Answer(status: response.status.code, json: json)
    }
}
