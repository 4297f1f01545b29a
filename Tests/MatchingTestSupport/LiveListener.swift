import Contracts
import Foundation
import HTTPTypes
import HummingbirdTesting
import MatchingCore
import Messaging
import ServiceKit
import ServiceLifecycle
import Synchronization
import TestSupport
import Testing

/// A phone on its way to Porthania, for the live location tests of the flows that share positions.
public enum LiveRoute {
    /// Where the driver or the deliverer starts, and the ten positions they send on their way to Porthania.
    public static let porthania = GeoPoint(
        lat: MatchingTestApp.porthania.latitude, lon: MatchingTestApp.porthania.longitude)
    public static let route = (0..<10).map {
        GeoPoint(lat: porthania.lat + Double(10 - $0) * 0.0004, lon: porthania.lon)
    }

    /// Ten positions along the route in two seconds, as a phone on the move sends them; the seconds it took from
    /// before the first to after the last.
    @discardableResult
    public static func sendRoute(to path: String, token: String, _ client: any TestClientProtocol) async throws
        -> Double
    {
        let start = Date()
        for point in route {
            try await send(point, to: path, token: token, client)
            // NB: not a wait for a condition: the pace of the sender, which the frames' pacing is tested against.
            try await Task.sleep(for: .milliseconds(200))
        }
        return Date().timeIntervalSince(start)
    }

    public static func send(_ point: GeoPoint, to path: String, token: String, _ client: any TestClientProtocol)
        async throws
    {
        try await expect(.ok, client.call(.put, path, token: token, body: ["lat": point.lat, "lon": point.lon]))
    }

    public static func expect(_ status: HTTPResponse.Status, _ answer: (HTTPResponse.Status, [String: Any])) throws {
        guard answer.0 == status else { throw TestFailure("expected \(status), got \(answer.0): \(answer.1)") }
    }

    /// Location frames without `seq`, more than one and no more than the positions, and no more than one a second
    /// over the `seconds` the positions took to send and the second after (when the last may still go). NB: counted,
    /// not timed at arrival: frames sent a second apart can arrive closer together when the broker is busy; and
    /// measured against the seconds the sends really took, which a busy machine stretches to one position a second or
    /// more apart, each then rightly a frame of its own.
    public static func expectPaced(_ frames: [LiveListener.Heard], sentOver seconds: Double) {
        #expect(frames.allSatisfy { $0.type == LocationFrame.type && !$0.hasSeq })
        #expect(frames.count >= 2 && frames.count <= route.count, "\(frames.count) frames")
        #expect(frames.count <= Int(seconds) + 2, "\(frames.count) frames in \(seconds) s of positions")
    }
}

/// A queue of the test's own on notifications' live exchange, bound to some users' keys: what their sockets would
/// be sent.
public final class LiveListener: Sendable {
    /// One frame one user was sent.
    public struct Heard: Sendable {
        public var userId: UUID
        public var type: String
        public var hasSeq: Bool
        public var data: LocationFrame.Payload
    }

    let channel: LiveChannel
    private let heard = Mutex<[Heard]>([])
    private let sentinels = Mutex<Set<String>>([])

    private init(channel: LiveChannel) {
        self.channel = channel
    }

    /// Runs `body` while the users' keys are bound in `broker`'s vhost.
    public static func listening(
        to users: [Identity], in broker: TestBroker, _ body: @Sendable (LiveListener) async throws -> Void
    ) async throws {
        let channel = LiveChannel(
            exchange: LiveFrames.exchange, amqpURL: broker.url, status: BrokerStatus(), logger: TestEnvironment.logger)
        let listener = LiveListener(channel: channel)
        channel.onReceive { key, body in listener.record(key, body) }
        try await runBriefly([channel]) {
            for user in users { await channel.bind(LiveFrames.routingKey(user.userId)) }
            try await body(listener)
        }
    }

    public func frames(to user: Identity) -> [Heard] {
        heard.withLock { $0.filter { $0.userId == user.userId } }
    }

    /// Returns once no position timer is left to work and a frame published now has come back to `user`'s key, so
    /// that any frame still on its way would have arrived.
    public func settle(_ app: MatchingTestApp, hearing user: Identity) async throws {
        // NB: bounds on a hang, not a speed: the work goes through a paced timer and the broker.
        try await eventually("no position timer left to work", timeout: 60) {
            let waiting: Int = try await app.database.pool.query(
                "SELECT count(*) AS waiting FROM timers WHERE kind = 'position' AND done_at IS NULL"
            ).first!.decode("waiting")
            return waiting == 0
        }
        let sentinel = UUID().uuidString
        let body = Data(#"{"sentinel":"\#(sentinel)"}"#.utf8)
        channel.publish(routingKey: LiveFrames.routingKey(user.userId), body: body)
        try await eventually("a frame published now back at the user's key", timeout: 60) {
            sentinels.withLock { $0.contains(sentinel) }
        }
    }

    private func record(_ routingKey: String, _ body: Data) {
        let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
        if let sentinel = object["sentinel"] as? String {
            sentinels.withLock { _ = $0.insert(sentinel) }
            return
        }
        guard routingKey.hasPrefix("user."), let userId = UUID(uuidString: String(routingKey.dropFirst(5))) else {
            return
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            return try Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }
        guard let frame = try? decoder.decode(LocationFrame.self, from: body) else { return }
        heard.withLock {
            $0.append(
                Heard(
                    userId: userId, type: frame.type, hasSeq: object["seq"] != nil,
                    data: frame.data))
        }
    }
}
