import Foundation
import Messaging
import NIOConcurrencyHelpers

/// The sockets this replica holds, by user, and the live channel that brings their users' entries here.
final class StreamHub: Sendable {
    let live: LiveChannel
    private let sessions = NIOLockedValueBox<[UUID: [UUID: AsyncStream<Data>.Continuation]]>([:])

    init(live: LiveChannel) {
        self.live = live
        live.onReceive { [weak self] routingKey, body in self?.deliver(routingKey: routingKey, body: body) }
    }

    /// Registers a socket of `userId` and binds the user's live key; returns once live messages will arrive.
    func open(userId: UUID) async -> (id: UUID, frames: AsyncStream<Data>) {
        let (frames, continuation) = AsyncStream<Data>.makeStream(bufferingPolicy: .bufferingNewest(10_000))
        let id = UUID()
        sessions.withLockedValue { $0[userId, default: [:]][id] = continuation }
        await live.bind(FeedRouting.liveKey(userId))
        return (id, frames)
    }

    func close(userId: UUID, session id: UUID) {
        let continuation = sessions.withLockedValue { sessions in
            defer { if sessions[userId]?.isEmpty == true { sessions[userId] = nil } }
            return sessions[userId]?.removeValue(forKey: id)
        }
        continuation?.finish()
        live.unbind(FeedRouting.liveKey(userId))
    }

    /// Sends a hint that is not stored (typing) to a user's sockets, wherever they are.
    func sendHint(to userId: UUID, body: Data) {
        live.publish(routingKey: FeedRouting.liveKey(userId), body: body)
    }

    var openSockets: Int {
        sessions.withLockedValue { $0.values.reduce(0) { $0 + $1.count } }
    }

    private func deliver(routingKey: String, body: Data) {
        guard routingKey.hasPrefix("user."), let userId = UUID(uuidString: String(routingKey.dropFirst(5))) else {
            return
        }
        for continuation in sessions.withLockedValue({ Array(($0[userId] ?? [:]).values) }) {
            continuation.yield(body)
        }
    }
}
