import Foundation
import MatchingCore
import Postgres
import ServiceKit

/// Requests: asking for a ride, and what riders and drivers see of requests.
extension RideSteps {
    /// The caller asks for a ride; a retry with the same client `id` returns the first request. It is offered at once
    /// to the nearest online drivers. A pickup point lies on the caller's campus, a drop-off point within the campus's
    /// drop-off radius (400 naming `pickup` or `dropoff`).
    public func requestRide(id: UUID?, _ draft: RideDraft, caller: Identity) async throws -> Ride {
        try settings.campuses.require(draft.pickup, of: caller.campus, field: "pickup")
        if let dropoff = draft.dropoff {
            try settings.campuses.require(dropoff, within: .dropoff, of: caller.campus, field: "dropoff")
        }
        return try await transaction { repository in
            try ReadModels.requireActive(caller.userId, on: repository.connection)
            let rideId = id ?? UUID()
            if let riderId = try repository.riderOf(rideId) {
                try RideRules.requireOwnRequest(riderId: riderId, caller: caller.userId)
                return try repository.ride(rideId, visibleTo: caller)!
            }
            let connection = repository.connection
            let pickup = try ReadModels.location(
                of: draft.pickup, campus: caller.campus, what: "pickup place", on: connection)
            let dropoff = try draft.dropoff.map {
                try ReadModels.location(of: $0, campus: caller.campus, what: "dropoff place", on: connection)
            }
            try RideRules.refuseSecondRequest(
                hasUnfinishedRequest: try repository.hasUnfinishedRequest(riderId: caller.userId))
            let expiresAt = Date().addingTimeInterval(settings.rideLifetime)
            let isInserted: Bool
            do {
                isInserted = try repository.insertRide(
                    id: rideId, caller: caller, pickup: pickup, dropoff: dropoff, note: draft.note,
                    expiresAt: expiresAt)
            } catch let error as PostgresError where error.isUniqueViolation {
                throw RideRules.secondRequest
            }
            // A retry racing its first attempt: the first one's request is the answer.
            guard isInserted else {
                try RideRules.requireOwnRequest(riderId: try repository.riderOf(rideId), caller: caller.userId)
                return try repository.ride(rideId, visibleTo: caller)!
            }
            let timerSteps = timerSteps(repository)
            try timerSteps.addTimer(.expiry, rideId, due: expiresAt)
            try timerSteps.offerNextRound(rideId)
            return try repository.ride(rideId, visibleTo: caller)!
        }
    }

    /// A ride, to its rider and to its driver; anyone else gets nil.
    public func ride(_ id: UUID, caller: Identity) async throws -> Ride? {
        try await transaction { try $0.ride(id, visibleTo: caller) }
    }

    /// The ride the caller asked for, or drives, that is not over: at most one of each, and a rider's first (a driver
    /// who has asked for a ride too is still a rider first). Nil when there is none.
    public func currentRide(caller: Identity) async throws -> Ride? {
        try await transaction { repository in
            try repository.currentRideId(of: caller).flatMap { try repository.ride($0, visibleTo: caller) }
        }
    }

    /// Open requests of the caller's campus within `radiusMeters` of `point`, nearest first, never the caller's own.
    /// 409 for a caller without a driver profile; 400 naming `lat` for a point neither on the campus nor within its
    /// margin.
    public func openRequests(near point: GeoPoint, radiusMeters: Double, limit: Int, caller: Identity) async throws
        -> RideRequestList
    {
        try settings.campuses.require(point, within: .margin, of: caller.campus, field: "lat")
        return try await transaction { repository in
            _ = try RideRules.requireDriverProfile(try repository.driver(caller.userId, campus: caller.campus))
            return RideRequestList(
                requests: try repository.openRequests(
                    near: point, radiusMeters: radiusMeters, limit: limit, caller: caller))
        }
    }
}
