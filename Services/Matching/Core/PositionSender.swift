import Contracts
import Foundation
import Logging
import Messaging

/// Sends positions to the one user entitled to them, as live frames on notifications' live exchange: fire and
/// forget, never stored. A frame lost on the way is replaced by the next one; the latest is also read with the
/// match.
public struct PositionSender: Sendable {
    private let live: LiveChannel?
    private let logger: Logger

    public init(live: LiveChannel, logger: Logger) {
        self.live = live
        self.logger = logger
    }

    private init() {
        live = nil
        logger = Logger(label: "positions")
    }

    /// A sender that sends nothing, for tools that work a flow's repository without a broker.
    public static let discarding = PositionSender()

    public func send(_ frame: LocationFrame.Payload, to userId: UUID) {
        guard let live else { return }
        do {
            live.publish(routingKey: LiveFrames.routingKey(userId), body: try LocationFrame(frame).json())
        } catch {
            logger.warning("a position frame could not be encoded", metadata: ["error": "\(error)"])
        }
    }
}

/// A frame to send once the transaction that decided it has committed.
public struct PendingFrame: Sendable {
    public var payload: LocationFrame.Payload
    public var receiver: UUID

    public init(_ payload: LocationFrame.Payload, to receiver: UUID) {
        self.payload = payload
        self.receiver = receiver
    }
}
