import Contracts
import Foundation
import MatchingCore
import Messaging
import Postgres
import ServiceKit

/// Rides: a driver accepts a request, either side calls it off, the driver marks its steps; its match and chat.
extension RideSteps {
    /// A driver takes an open request: the first wins, everyone after gets 409 (a retry of the winner gets its ride
    /// again); a driver with a ride under way, or the rider themselves, 409 too. The ride gets a new code; the rider is
    /// told with it, the chat opens.
    public func accept(_ rideId: UUID, caller: Identity) async throws -> Ride {
        do {
            return try await transaction { repository in
                guard try repository.isOfCampus(rideId, campus: caller.campus),
                    let state = try repository.acceptState(rideId, campus: caller.campus),
                    try !ReadModels.isBlocked(state.riderId, caller.userId, on: repository.connection)
                else { throw MatchingError.notFound("ride") }
                let driver = try RideRules.requireDriverProfile(
                    try repository.driver(caller.userId, campus: caller.campus))
                let held = try repository.ride(rideId, visibleTo: caller)
                if let held, RideRules.isAcceptRetry(held, by: caller.userId) { return held }
                try RideRules.refuseSecondRide(hasRideUnderway: try repository.hasRideUnderway(driverId: caller.userId))
                let (matchId, code) = (UUID(), RideCode.draw())
                guard
                    let accepted = try repository.acceptIfOpen(
                        rideId, driver: driver, match: matchId, code: code, caller: caller)
                else {
                    guard let found = try repository.acceptState(rideId, campus: caller.campus) else {
                        throw MatchingError.notFound("ride")
                    }
                    throw RideRules.refusalToAccept(
                        isOwn: found.riderId == caller.userId, status: found.status, isExpired: found.isExpired)
                }
                let ride = try repository.ride(rideId, visibleTo: caller)!
                try Outbox.append(
                    RideAccepted(
                        rideId: rideId, matchId: matchId, campus: caller.campus, riderId: accepted.riderId,
                        driver: RideRules.rideDriver(driver), code: code, version: accepted.version),
                    on: repository.connection)
                try Self.match(
                    matchId, campus: caller.campus,
                    rider: MatchMember(userId: accepted.riderId, name: ride.riderName, role: "rider"),
                    driver: MatchMember(userId: caller.userId, name: driver.name, role: "driver"),
                    subject: RideRules.subject(pickup: ride.pickup.name, dropoff: ride.dropoff?.name)
                ).announceOpened(on: repository.connection)
                return ride
            }
        } catch let error as PostgresError where error.isUniqueViolation {
            // Two rides accepted at once by one driver: the index keeps the first.
            throw RideRules.secondRideUnderway
        }
    }

    /// The rider calls the ride off (its driver, or the drivers it was offered to, are told), or the driver gives it
    /// up (it is open again and offered anew; the rider is told). Either, only before the ride has started.
    public func cancel(_ rideId: UUID, caller: Identity) async throws -> Ride {
        try await transaction { repository in
            guard let locked = try repository.lockRide(rideId, partyTo: caller),
                let party = RideRules.party(caller.userId, riderId: locked.riderId, driverId: locked.driverId)
            else { throw MatchingError.notFound("ride") }
            try RideRules.requireCancellable(by: party, from: locked.status)
            switch party {
            case .rider: return try riderCancels(locked, caller: caller, repository)
            case .driver: return try driverGivesUp(locked, caller: caller, repository)
            }
        }
    }

    /// The rider's cancel: the ride is over; its driver, or else the drivers it was offered to, are told.
    private func riderCancels(_ locked: LockedRide, caller: Identity, _ repository: RidesPostgresRepository) throws
        -> Ride
    {
        try Self.cancelAsRider(locked, repository)
        return try repository.ride(locked.id, visibleTo: caller)!
    }

    /// Cancels a locked ride on its rider's word: its driver, or else the drivers it was offered to, are told, and the
    /// match with its driver closes.
    static func cancelAsRider(_ locked: LockedRide, _ repository: RidesPostgresRepository) throws {
        let version = try repository.setCancelled(locked.id, reason: .rider)
        let recipients = try locked.driverId.map { [$0] } ?? repository.offeredDrivers(locked.id)
        try Outbox.append(
            RideCancelled(
                rideId: locked.id, cancelledBy: locked.riderId, reason: .rider, recipients: recipients,
                version: version),
            on: repository.connection)
        if let driverId = locked.driverId {
            try closeMatch(of: locked, driverId: driverId, .cancelled, version: version, on: repository.connection)
        }
    }

    /// The driver gives the ride up: it is open again for a full lifetime, offered anew to everyone but them.
    private func driverGivesUp(_ locked: LockedRide, caller: Identity, _ repository: RidesPostgresRepository) throws
        -> Ride
    {
        let (version, expiresAt) = try repository.reopen(locked.id, lifetime: settings.rideLifetime)
        try repository.resetOffers(locked.id, keeping: caller.userId)
        let timerSteps = timerSteps(repository)
        try timerSteps.addTimer(.expiry, locked.id, due: expiresAt)
        try Outbox.append(
            RideReopened(
                rideId: locked.id, driverId: caller.userId, riderId: locked.riderId, expiresAt: expiresAt,
                version: version),
            on: repository.connection)
        try Self.closeMatch(
            of: locked, driverId: caller.userId, .cancelled, version: version, on: repository.connection)
        try timerSteps.offerNextRound(locked.id)
        return try repository.ride(locked.id)!
    }

    /// What marking a ride did: the ride marked, or a code refused, counted and committed all the same.
    private enum Marking: Sendable {
        case marked(Ride)
        case codeRefused(MatchingError)
    }

    /// The driver marks the ride arrived, started or completed, in that order (409 otherwise); the rider is told.
    /// Starting takes the rider's `code`: a wrong one is counted and answered 409, and the last wrong one the ride
    /// takes cancels it (both are told, the chat closes). NB: the count is kept under the ride's row lock, so that of
    /// any number of codes tried at once no more than the allowed are counted, and the ride is cancelled once.
    public func mark(_ rideId: UUID, _ step: RideStep, code: String? = nil, caller: Identity) async throws -> Ride {
        let marking = try await transaction { repository -> Marking in
            guard let locked = try repository.lockRide(rideId, partyTo: caller),
                let party = RideRules.party(caller.userId, riderId: locked.riderId, driverId: locked.driverId)
            else { throw MatchingError.notFound("ride") }
            if step == .started, party == .driver, locked.cancelReason == .codeRefused {
                throw RideCode.cancelledForWrongCodes
            }
            let status = try RideRules.status(after: step, by: party, from: locked.status)
            if step == .started {
                let check = RideCode.check(
                    try RideCode.validated(code), against: locked.code, wrongSoFar: locked.wrongCodes)
                if let refusal = RideCode.refusal(check) {
                    try repository.countWrongCode(rideId)
                    if check == .refused { try cancelForWrongCodes(locked, repository) }
                    return .codeRefused(refusal)
                }
            }
            return .marked(try markStep(locked, step, status: status, caller: caller, repository))
        }
        switch marking {
        case .marked(let ride): return ride
        case .codeRefused(let refusal): throw refusal
        }
    }

    /// Writes a driver's step of a locked ride and tells the rider; completing closes the match.
    private func markStep(
        _ locked: LockedRide, _ step: RideStep, status: RideStatus, caller: Identity,
        _ repository: RidesPostgresRepository
    ) throws -> Ride {
        let rideId = locked.id
        let version = try repository.setStatus(rideId, status, at: step)
        let (driverId, riderId, connection) = (caller.userId, locked.riderId, repository.connection)
        switch step {
        case .arrived:
            try Outbox.append(
                RideArrived(rideId: rideId, driverId: driverId, riderId: riderId, version: version), on: connection)
        case .started:
            try Outbox.append(
                RideStarted(rideId: rideId, driverId: driverId, riderId: riderId, version: version), on: connection)
        case .completed:
            try Outbox.append(
                RideCompleted(rideId: rideId, driverId: driverId, riderId: riderId, version: version), on: connection)
            try Self.closeMatch(of: locked, driverId: driverId, .completed, version: version, on: connection)
        }
        return try repository.ride(rideId, visibleTo: caller)!
    }

    /// The last wrong code a ride takes: it is cancelled as a rider's cancel would, and both its rider and its driver
    /// are told; the chat closes.
    private func cancelForWrongCodes(_ locked: LockedRide, _ repository: RidesPostgresRepository) throws {
        _ = try locked.status.after(.refuseCode)
        guard let driverId = locked.driverId else { return }
        let version = try repository.setCancelled(locked.id, reason: .codeRefused)
        try Outbox.append(
            RideCancelled(
                rideId: locked.id, cancelledBy: driverId, reason: .codeRefused, recipients: [locked.riderId, driverId],
                version: version),
            on: repository.connection)
        try Self.closeMatch(of: locked, driverId: driverId, .cancelled, version: version, on: repository.connection)
    }

    /// The match of a ride's rider and driver, for its chat; closing needs only the members' ids.
    static func match(_ matchId: UUID, campus: String, rider: MatchMember, driver: MatchMember, subject: String)
        -> FlowMatch
    {
        FlowMatch(id: matchId, flow: RidesFlow.name, campus: campus, members: [rider, driver], subject: subject)
    }

    /// Closes the match of a locked ride and `driverId`, when it has one; its chat closes with it.
    static func closeMatch(
        of locked: LockedRide, driverId: UUID, _ ending: FlowMatch.Ending, version: Int64,
        on connection: PostgresConnection
    ) throws {
        guard let matchId = locked.matchId else { return }
        try match(
            matchId, campus: locked.campus, rider: MatchMember(userId: locked.riderId, name: "", role: "rider"),
            driver: MatchMember(userId: driverId, name: "", role: "driver"), subject: ""
        ).announceClosed(ending, version: version, on: connection)
    }
}
