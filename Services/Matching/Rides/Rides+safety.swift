import Foundation
import Messaging
import Postgres

/// What blocks, suspensions and deleted accounts do to the rides flow.
extension RideSteps {
    /// One of two students blocked the other: a ride under way between them is cancelled (both are told, the chat
    /// closes with reason `blocked`).
    static func closeBetween(_ a: UUID, _ b: UUID, settings: RideSettings, on connection: PostgresConnection) throws {
        let repository = RidesPostgresRepository(connection: connection, onlineWindow: settings.onlineWindow)
        for locked in try repository.lockRidesUnderway(between: a, b) {
            guard let driverId = locked.driverId else { continue }
            let version = try repository.setCancelled(locked.id, reason: RideCancelReason.blocked)
            try Outbox.append(
                RideCancelled(
                    rideId: locked.id, cancelledBy: a, reason: .blocked, recipients: [locked.riderId, driverId],
                    version: version),
                on: connection)
            try closeMatch(of: locked, driverId: driverId, .blocked, version: version, on: connection)
        }
    }

    /// Erases a student who deleted their account, once a suspension's closing has cancelled the rides under way
    /// between them and anyone: their request that is not over yet is cancelled as their own cancel does (whoever it
    /// was offered to is told); then what is kept of them (a finished ride) no longer names them nor holds what they
    /// wrote.
    static func erase(_ userId: UUID, settings: RideSettings, on connection: PostgresConnection) throws {
        let repository = RidesPostgresRepository(connection: connection, onlineWindow: settings.onlineWindow)
        if let locked = try repository.lockUnfinishedRide(riderId: userId) {
            try cancelAsRider(locked, repository)
        }
        try repository.erase(userId)
    }
}
