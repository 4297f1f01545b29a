import Foundation
import Logging
import ServiceLifecycle

/// Sends push notifications to a user's devices.
protocol PushSender: Sendable {
    func send(to token: String, userId: UUID, type: String, seq: Int64) async throws
}

/// Writes the push to the log instead of sending it: the default until a push provider is configured.
struct LogPushSender: PushSender {
    let logger: Logger

    func send(to token: String, userId: UUID, type: String, seq: Int64) async throws {
        logger.info(
            "push",
            metadata: ["userId": "\(userId)", "token": "\(token.prefix(8))…", "type": "\(type)", "seq": "\(seq)"])
    }
}

/// Pushes each feed entry that no socket took within `grace` seconds to the user's devices, once: the entry is
/// marked before sending, and replicas claim entries with SKIP LOCKED.
struct PushDispatcher: Service {
    let repository: FeedPostgresRepository
    let sender: any PushSender
    let grace: TimeInterval
    let logger: Logger

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                for push in try await repository.claimDuePushes(olderThan: grace) {
                    for token in push.tokens {
                        do {
                            try await sender.send(to: token, userId: push.userId, type: push.type, seq: push.seq)
                        } catch {
                            // NB: not retried: a push is a courtesy; the entry stays in the feed for the next connect.
                            logger.warning(
                                "push failed",
                                metadata: ["userId": "\(push.userId)", "seq": "\(push.seq)", "error": "\(error)"])
                        }
                    }
                }
            } catch {
                logger.warning("push dispatch failed; retrying", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
