import Foundation

/// Erasing a student who deleted their account from the delivery flow, once a suspension's closing has ended their
/// matches.
extension DeliveryTimerSteps {
    /// Their open runs close as a check-out does (pending offers withdrawn, their orders dispatched again), their
    /// orders still without a deliverer are cancelled as the orderer's cancel does (a pending offer withdrawn, its
    /// seat offered on), and then what is kept no longer names them nor holds what they wrote.
    func erase(_ userId: UUID) throws {
        for run in try repository.lockOpenRuns(delivererId: userId) {
            try close(run, to: try run.status.after(.checkOut), reason: "checkedOut")
        }
        for orderId in try repository.unmatchedOrderIds(ordererId: userId) {
            guard let order = try repository.lockOrder(id: orderId), let cancelled = try? order.status.after(.cancel)
            else { continue }
            try withdrawPendingOffer(orderId: orderId, reason: "orderCancelled")
            try repository.setOrderStatus(orderId, cancelled)
        }
        try repository.erase(userId)
    }
}
