import Contracts
import Foundation
import MatchingCore
import ServiceKit

/// Drivers: their profiles, where they are, and going offline.
extension RideSteps {
    /// Creates or replaces the caller's driver profile.
    public func saveDriver(car: String, seats: Int, caller: Identity) async throws -> Driver {
        try await transaction { repository in
            try ReadModels.requireActive(caller.userId, on: repository.connection)
            try repository.upsertDriver(car: car, seats: seats, caller: caller)
            return try repository.driver(caller.userId, campus: caller.campus)!
        }
    }

    /// The caller's driver profile, if they added one.
    public func driver(caller: Identity) async throws -> Driver? {
        try await transaction { try $0.driver(caller.userId, campus: caller.campus) }
    }

    /// The caller's latest position: they are online until it is older than the online window. 409 without a profile.
    /// It may be anywhere (a driver drives in), but only from one on their campus or within its margin are they
    /// offered its rides. While they drive a ride, it also goes to its rider, at most once a second (the latest
    /// always). Not `durable`: every driver sends one every few seconds, and the next replaces it.
    public func reportPosition(_ point: GeoPoint, caller: Identity) async throws -> Driver {
        let isNearCampus = settings.campuses.isWithin(.margin, of: caller.campus, point)
        let (driver, frame) = try await transaction(durable: false) { repository in
            let saved = try RideRules.requireDriverProfile(
                try repository.savePosition(point, isNearCampus: isNearCampus, caller: caller))
            guard let ride = saved.ride,
                try PositionPacing.record(
                    table: "rides", id: ride.id, flow: RidesFlow.name, lastSentAt: ride.lastSentAt,
                    isPending: ride.isPending, now: saved.now, on: repository.connection)
            else { return (saved.driver, nil as PendingFrame?) }
            return (saved.driver, PendingFrame(.init(rideId: ride.id, position: saved.position), to: ride.riderId))
        }
        // NB: sent once committed, so that a frame never shows a position the ride does not.
        if let frame, let rideId = frame.payload.rideId {
            positions.send(frame.payload, to: frame.receiver)
            await PositionPacing.markSent(table: "rides", id: rideId, in: database)
        }
        return driver
    }

    /// The caller goes offline: their position is forgotten. 404 without a profile.
    public func goOffline(caller: Identity) async throws -> Driver {
        try await transaction { repository in
            guard try repository.driver(caller.userId, campus: caller.campus) != nil else {
                throw RideRules.missingDriverProfile
            }
            try repository.deletePosition(of: caller.userId)
            return try repository.driver(caller.userId, campus: caller.campus)!
        }
    }
}
