import Foundation
import Logging
import Metrics
import ServiceKit
import ServiceLifecycle

/// Pushes each feed entry that no socket took within `grace` seconds to the devices of its user. An entry is claimed
/// (taken out of those awaiting a push) before anything is sent, by one replica only (SKIP LOCKED), so no device is
/// pushed one entry twice; a push the service refuses for now is tried again with a growing pause while it is worth
/// sending (its time to live), and a device its service says is gone is deleted. `pushes_total` on `/metrics` counts
/// pushes by platform and outcome.
struct PushDispatcher: Service {
    let repository: FeedPostgresRepository
    let sender: any PushSender
    let grace: TimeInterval
    let metrics: ServiceMetrics
    let logger: Logger
    /// The longest pause between two tries of one push.
    var longestPause: TimeInterval = 60

    func run() async throws {
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled && !Task.isShuttingDownGracefully {
                do {
                    for push in try await repository.claimDuePushes(olderThan: grace) {
                        let message = PushContent.message(
                            type: push.type, seq: push.seq, dataJSON: push.dataJSON, badge: push.badge)
                        for device in push.devices {
                            group.addTask { await deliver(message, to: device, userId: push.userId) }
                        }
                    }
                } catch {
                    logger.warning("push dispatch failed; retrying", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    private func deliver(_ message: PushMessage, to device: PushDevice, userId: UUID) async {
        let deadline = Date().addingTimeInterval(TimeInterval(message.timeToLive))
        var attempt = 0
        while true {
            attempt += 1
            let outcome = await sender.send(message, to: device)
            metrics.counter("pushes_total", dimensions: [("platform", device.platform), ("outcome", outcome.label)])
                .increment()
            switch outcome {
            case .sent, .unsupported:
                return
            case .gone:
                try? await repository.deleteDevice(device.id)
                logger.info("a device is gone; deleted", metadata: ["userId": "\(userId)", "device": "\(device.id)"])
                return
            case .failed(let reason):
                logger.warning(
                    "a push was refused",
                    metadata: ["userId": "\(userId)", "seq": "\(message.seq)", "reason": "\(reason)"])
                return
            case .retry(let after):
                let pause = after ?? min(longestPause, pow(2, Double(min(attempt, 16))))
                guard Date().addingTimeInterval(pause) < deadline, !Task.isShuttingDownGracefully else {
                    metrics.counter(
                        "pushes_total", dimensions: [("platform", device.platform), ("outcome", "expired")]
                    )
                    .increment()
                    return
                }
                // NB: a shutdown does not wait out the pause.
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(pause)) }
            }
        }
    }
}
