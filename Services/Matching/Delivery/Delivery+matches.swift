import Contracts
import Foundation
import MatchingCore
import Messaging
import Postgres
import ServiceKit

extension DeliverySteps {
    /// What the caller has under way on their campus: open runs, orders not yet over, active matches on either side.
    func current(caller: Identity) async throws -> DeliveryUnderWay {
        try await transaction { repository in
            let orders = try repository.openOrderIds(ordererId: caller.userId, campus: caller.campus)
            let matches = try repository.activeMatchIds(memberId: caller.userId, campus: caller.campus)
            return DeliveryUnderWay(
                runs: try repository.openRuns(delivererId: caller.userId, campus: caller.campus),
                orders: try orders.compactMap { try repository.order(id: $0) },
                matches: try matches.compactMap { try repository.match(id: $0) })
        }
    }

    /// The match, to its two members.
    func match(id: UUID, caller: Identity) async throws -> Match {
        try await transaction { repository in
            try DeliveryAccess.match(try repository.match(id: id), userId: caller.userId)
        }
    }

    /// Either member ends the match: the orderer's word ends the order; the deliverer's sends it back to dispatch.
    func cancelMatch(id: UUID, caller: Identity) async throws -> Match {
        try await transaction { repository in
            let (match, side) = try DeliveryAccess.side(
                in: try repository.lockMatch(id: id), userId: caller.userId)
            try timerSteps(repository).cancel(match, by: side)
            return try repository.match(id: id)!
        }
    }

    /// Marks one member's completion; when both have, the match and the order are complete and the seat is free.
    public func completeMatch(id: UUID, caller: Identity) async throws -> Match {
        try await transaction { repository in
            let steps = timerSteps(repository)
            let (match, side) = try DeliveryAccess.side(in: try repository.lockMatch(id: id), userId: caller.userId)
            try complete(match, by: side, in: steps)
            return try repository.match(id: id)!
        }
    }

    private func complete(_ match: Match, by side: MatchSide, in steps: DeliveryTimerSteps) throws {
        let repository = steps.repository
        guard try match.status.needsCompletion() else { return }
        let completed = try repository.markCompleted(matchId: match.id, by: side)
        guard MatchStatus.isComplete(ordererCompleted: completed.orderer, delivererCompleted: completed.deliverer)
        else { return }
        let status = try match.status.after(.complete)
        guard let order = try repository.lockOrder(id: match.orderId) else { return }
        _ = try repository.lockRun(id: match.runId)
        let version = try repository.endMatch(match.id, as: status)
        try repository.releaseSeat(runId: match.runId)
        try repository.setOrderStatus(order.id, try order.status.after(.complete))
        try Outbox.append(
            MatchCompleted(match: match.parties(campus: order.campus), version: version), on: repository.connection)
        try match.flowMatch(campus: order.campus).announceClosed(
            .completed, version: version, on: repository.connection)
        try steps.fillSeats(of: match.runId)
    }

    /// The deliverer's latest position on their active match, kept until it ends; it goes to the orderer at most once
    /// a second (the latest always). Anyone but the deliverer gets 404; a match that is over, 409.
    public func reportPosition(_ point: GeoPoint, matchId: UUID, caller: Identity) async throws -> Match {
        let (match, frame) = try await transaction(durable: false) { repository in
            let match = try DeliveryAccess.positionMatch(try repository.lockMatch(id: matchId), userId: caller.userId)
            try repository.setPosition(point, matchId: matchId)
            let updated = try repository.match(id: matchId)!
            let frame = updated.delivererPosition.map {
                PendingFrame(.init(matchId: matchId, position: $0), to: match.ordererId)
            }
            let isDue = try PositionPacing.record(
                table: "matches", id: matchId, flow: DeliveryFlow.name, on: repository.connection)
            return (updated, isDue ? frame : nil)
        }
        // NB: sent once committed, so that a frame never shows a position the match does not.
        if let frame {
            positions.send(frame.payload, to: frame.receiver)
            await PositionPacing.markSent(table: "matches", id: matchId, in: database)
        }
        return match
    }
}
