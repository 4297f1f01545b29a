import Foundation
import NIOConcurrencyHelpers

/// What the clients sent and what reached the other side: orders until their first offer arrives on the
/// deliverer's socket, and chat messages until they arrive on their recipient's socket, exactly once.
final class Ledger: Sendable {
    static let orderToOffer = "order placed → offer on the deliverer's socket"
    static let messageToSocket = "message POST → the recipient's socket"
    static let messageStoredToSocket = "message stored in the feed → the recipient's socket"

    private struct SentMessage {
        var sentAt: Double
        var recipientId: String
        var arrivals = 0
    }

    private struct State {
        var ordersPlacedAt: [String: Double] = [:]
        var offeredOrders: Set<String> = []
        var messages: [String: SentMessage] = [:]
        var misdelivered = 0
        var unknownArrivals = 0
    }

    /// How the chat messages fared.
    struct MessageTally: Sendable {
        var sent = 0
        var arrivedOnce = 0
        var lost = 0
        var duplicated = 0
        var misdelivered = 0
        var unknown = 0
    }

    private let state = NIOLockedValueBox(State())
    private let measurements: Measurements

    init(measurements: Measurements) {
        self.measurements = measurements
    }

    /// Notes the moment just before the order's POST.
    func placing(order orderId: String, at time: Double) {
        state.withLockedValue { $0.ordersPlacedAt[orderId] = time }
    }

    /// An offer reached a deliverer's socket; the first offer of an order is timed from its POST.
    func offerArrived(order orderId: String, at time: Double) {
        let placedAt = state.withLockedValue { state -> Double? in
            guard state.offeredOrders.insert(orderId).inserted else { return nil }
            return state.ordersPlacedAt[orderId]
        }
        if let placedAt { measurements.record(Self.orderToOffer, seconds: time - placedAt) }
    }

    /// Notes a message about to be POSTed to `recipientId`.
    func sending(message messageId: String, to recipientId: String, at time: Double) {
        state.withLockedValue { $0.messages[messageId] = SentMessage(sentAt: time, recipientId: recipientId) }
    }

    /// The POST was refused: the message does not exist, so it is expected nowhere.
    func notSent(message messageId: String) {
        state.withLockedValue { $0.messages[messageId] = nil }
    }

    /// A `message.sent` entry reached the socket of `ownerId`, `sinceStored` seconds after notifications stored it.
    func messageArrived(_ messageId: String, on ownerId: String, at time: Double, sinceStored: Double?) {
        let sentAt = state.withLockedValue { state -> Double? in
            guard var message = state.messages[messageId] else {
                state.unknownArrivals += 1
                return nil
            }
            guard message.recipientId == ownerId else {
                state.misdelivered += 1
                return nil
            }
            message.arrivals += 1
            state.messages[messageId] = message
            return message.arrivals == 1 ? message.sentAt : nil
        }
        if let sentAt {
            measurements.record(Self.messageToSocket, seconds: time - sentAt)
            if let sinceStored { measurements.record(Self.messageStoredToSocket, seconds: sinceStored) }
        }
    }

    var messages: MessageTally {
        state.withLockedValue { state in
            var tally = MessageTally(misdelivered: state.misdelivered, unknown: state.unknownArrivals)
            for message in state.messages.values {
                tally.sent += 1
                switch message.arrivals {
                case 0: tally.lost += 1
                case 1: tally.arrivedOnce += 1
                default: tally.duplicated += 1
                }
            }
            return tally
        }
    }

    var ordersPlaced: Int { state.withLockedValue { $0.ordersPlacedAt.count } }
    var ordersOffered: Int { state.withLockedValue { $0.offeredOrders.count } }
}
