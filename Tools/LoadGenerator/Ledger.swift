import Foundation
import NIOConcurrencyHelpers

/// What the clients sent and what reached the other side: orders until their first offer arrives on the
/// deliverer's socket, chat messages until they arrive on their recipient's socket, exactly once, and the positions
/// of a ride's driver until they arrive on its rider's socket.
final class Ledger: Sendable {
    static let orderToOffer = "order placed → offer on the deliverer's socket"
    static let messageToSocket = "message POST → the recipient's socket"
    static let messageStoredToSocket = "message stored in the feed → the recipient's socket"
    static let positionToSocket = "position PUT sent → the rider's socket"
    static let positionAnsweredToSocket = "position PUT answered → the rider's socket"
    static let positionStoredToSocket = "position stored (its at) → the rider's socket"
    static let paths = [
        orderToOffer, messageToSocket, messageStoredToSocket, positionToSocket, positionAnsweredToSocket,
        positionStoredToSocket,
    ]

    private struct SentMessage {
        var sentAt: Double
        var recipientId: String
        var arrivals = 0
    }

    /// A position as frames carry it, to a tenth of a microdegree (about a centimetre), so that the round trip
    /// through PostGIS and JSON compares alike.
    private struct PositionKey: Hashable {
        var rideId: String
        var lat: Int64
        var lon: Int64

        init(rideId: String, lat: Double, lon: Double) {
            self.rideId = rideId
            self.lat = Int64((lat * 1e7).rounded())
            self.lon = Int64((lon * 1e7).rounded())
        }
    }

    private struct SentPosition {
        var sentAt: Double
        var answeredAt: Double?
        var arrivedAt: Double?
        var arrivals = 0
    }

    private struct WatchedRide {
        var riderId: String
        var lastArrivalAt: Double?
    }

    private struct State {
        var ordersPlacedAt: [String: Double] = [:]
        var offeredOrders: Set<String> = []
        var messages: [String: SentMessage] = [:]
        var misdelivered = 0
        var unknownArrivals = 0
        var rides: [String: WatchedRide] = [:]
        var positions: [PositionKey: SentPosition] = [:]
        var positionTally = PositionTally()
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

    /// How the positions of the rides' drivers fared.
    struct PositionTally: Sendable {
        var sent = 0
        var arrivedOnce = 0
        var lost = 0
        var duplicated = 0
        var misdelivered = 0
        /// Frames of a watched ride with a position its driver never sent (or whose PUT failed).
        var unknown = 0
        /// Frames read before the PUT that sent them was answered.
        var beforeAnswer = 0
        /// The shortest time between two frames of one ride on its rider's socket.
        var shortestGap: Double?
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

    /// Follows the positions of the ride's driver to `riderId`'s socket from now on.
    func watch(ride rideId: String, rider riderId: String) {
        state.withLockedValue { $0.rides[rideId] = WatchedRide(riderId: riderId) }
    }

    /// Notes a position of a watched ride's driver about to be PUT.
    func sending(position lat: Double, _ lon: Double, ride rideId: String, at time: Double) {
        let key = PositionKey(rideId: rideId, lat: lat, lon: lon)
        state.withLockedValue { $0.positions[key] = SentPosition(sentAt: time) }
    }

    /// The position's PUT was answered: a failed one is expected nowhere; a frame that came first is timed now.
    func answered(position lat: Double, _ lon: Double, ride rideId: String, at time: Double, isSuccess: Bool) {
        let key = PositionKey(rideId: rideId, lat: lat, lon: lon)
        let arrivedAt = state.withLockedValue { state -> Double? in
            guard isSuccess else {
                state.positions[key] = nil
                return nil
            }
            state.positions[key]?.answeredAt = time
            return state.positions[key]?.arrivedAt
        }
        if let arrivedAt { measurements.record(Self.positionAnsweredToSocket, seconds: arrivedAt - time) }
    }

    /// A `location` frame of `rideId` reached the socket of `ownerId`, `sinceStored` seconds after the position's
    /// `at` (when matching stored it).
    func positionArrived(
        ride rideId: String, lat: Double, lon: Double, on ownerId: String, at time: Double, sinceStored: Double?
    ) {
        let key = PositionKey(rideId: rideId, lat: lat, lon: lon)
        let times = state.withLockedValue { state -> (sent: Double, answered: Double?)? in
            guard var ride = state.rides[rideId] else {
                state.positionTally.unknown += 1
                return nil
            }
            guard ride.riderId == ownerId else {
                state.positionTally.misdelivered += 1
                return nil
            }
            if let last = ride.lastArrivalAt {
                state.positionTally.shortestGap = min(state.positionTally.shortestGap ?? .infinity, time - last)
            }
            ride.lastArrivalAt = time
            state.rides[rideId] = ride
            guard var position = state.positions[key] else {
                state.positionTally.unknown += 1
                return nil
            }
            position.arrivals += 1
            guard position.arrivals == 1 else {
                state.positions[key] = position
                return nil
            }
            position.arrivedAt = time
            state.positions[key] = position
            if position.answeredAt == nil { state.positionTally.beforeAnswer += 1 }
            return (position.sentAt, position.answeredAt)
        }
        guard let times else { return }
        measurements.record(Self.positionToSocket, seconds: time - times.sent)
        if let answered = times.answered {
            measurements.record(Self.positionAnsweredToSocket, seconds: time - answered)
        }
        if let sinceStored { measurements.record(Self.positionStoredToSocket, seconds: sinceStored) }
    }

    var positions: PositionTally {
        state.withLockedValue { state in
            var tally = state.positionTally
            for position in state.positions.values {
                tally.sent += 1
                switch position.arrivals {
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
