import Contracts
import Foundation
import MatchingCore
import Messaging

/// The flow's steps inside a transaction already open: the rounds of offers of a request, and what the flow's timers
/// are due for.
struct RideTimerSteps {
    let repository: RidesPostgresRepository
    let settings: RideSettings

    /// `position` is `PositionPacing.timerKind`.
    enum TimerKind: String, CaseIterable { case offer, expiry, position }

    func addTimer(_ kind: TimerKind, _ target: UUID, due: Date) throws {
        try Timers.add(flow: RidesFlow.name, kind: kind.rawValue, target: target, due: due, on: repository.connection)
    }

    /// Does what a timer is due for; a position timer answers the frame to send.
    func timerIsDue(_ kind: TimerKind, _ target: UUID) throws -> PendingFrame? {
        switch kind {
        case .offer: try offerRoundIsDue(target)
        case .expiry: try expire(target)
        case .position:
            return try PositionPacing.takePending(
                table: "rides", id: target, flow: RidesFlow.name, on: repository.connection
            ) {
                try latestPositionFrame(target)
            }
        }
        return nil
    }

    /// Offers an open ride to the next nearest online drivers not offered it yet, as many and as far as its next
    /// round allows, and schedules the round after, while there is one.
    func offerNextRound(_ rideId: UUID) throws {
        guard let locked = try repository.lockForOffers(rideId) else { return }
        switch RideRules.offering(status: locked.status, afterRound: locked.lastRound, now: Date(), settings: settings)
        {
        case .nothing:
            return
        case .noMoreRounds:
            try repository.clearNextOffer(rideId)
        case .round(let round, let next):
            guard let ride = try repository.ride(rideId) else { return }
            let candidates = try repository.candidates(
                for: rideId, radiusMeters: round.radiusMeters, limit: round.count)
            for candidate in candidates {
                try repository.insertOffer(
                    rideId, driverId: candidate.driverId, round: round.number, distanceMeters: candidate.distance)
                try Outbox.append(
                    RideOffered(
                        rideId: rideId, campus: locked.campus, riderId: ride.riderId, riderName: ride.riderName,
                        pickup: ride.pickup,
                        dropoff: ride.dropoff, note: ride.note, driverId: candidate.driverId,
                        distanceMeters: candidate.distance, expiresAt: ride.expiresAt, version: locked.version),
                    on: repository.connection)
            }
            try repository.setOfferRound(rideId, round.number, nextOfferAt: next)
            if let next { try addTimer(.offer, rideId, due: next) }
        }
    }

    /// The next round, unless someone accepted, the request ended, or a reopening started the rounds again (a timer
    /// of a round that no longer counts finds `next_offer_at` later than itself).
    private func offerRoundIsDue(_ rideId: UUID) throws {
        guard try repository.lockIfOfferDue(rideId) else { return }
        try offerNextRound(rideId)
    }

    /// An open request at its end is over; the rider is told.
    private func expire(_ rideId: UUID) throws {
        guard let expired = try repository.expireIfDue(rideId) else { return }
        try Outbox.append(
            RideExpired(rideId: rideId, riderId: expired.riderId, version: expired.version), on: repository.connection)
    }

    /// The latest position of a ride's driver, as a frame to its rider, while the ride is under way.
    private func latestPositionFrame(_ rideId: UUID) throws -> PendingFrame? {
        guard let ride = try repository.ride(rideId), ride.status.isUnderway, let position = ride.driver?.position
        else {
            return nil
        }
        return PendingFrame(.init(rideId: rideId, position: position), to: ride.riderId)
    }
}
