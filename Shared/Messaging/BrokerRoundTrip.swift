import Foundation
import NIOPosix

/// The broker's floor for one durable message: publish a persistent message to a durable quorum queue, wait for
/// its publisher confirm, consume it and ack it, one message at a time. The queue is made for the measurement
/// and expires a minute after it is last used. Needs an account that may declare queues on the URL's vhost.
public struct BrokerRoundTrip: Sendable {
    /// One message's times, in seconds from just before its publish.
    public struct Sample: Sendable {
        /// Until the broker confirmed the publish (the message is on disk on a quorum of nodes).
        public var confirmed: Double
        /// Until the consumer received it and sent its ack.
        public var acknowledged: Double
    }

    public let url: String
    public let bodySize: Int

    public init(url: String, bodySize: Int = 256) {
        self.url = url
        self.bodySize = bodySize
    }

    /// Sends `count` messages after `warmUp` unmeasured ones, on a thread of its own, and returns their times.
    public func measure(count: Int, warmUp: Int = 20) async throws -> [Sample] {
        let thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        defer { thread.shutdownGracefully { _ in } }
        let url = url
        let bodySize = bodySize
        return try await thread.runIfActive {
            try Self.roundTrips(url: url, bodySize: bodySize, count: count, warmUp: warmUp)
        }
    }

    private static func roundTrips(url: String, bodySize: Int, count: Int, warmUp: Int) throws -> [Sample] {
        // NB: confirms and consuming need separate connections: frames read while waiting for one cannot be put back.
        let publisher = try AMQPConnection(url: url)
        defer { publisher.close() }
        let consumer = try AMQPConnection(url: url)
        defer { consumer.close() }
        let queue = "benchmark.round-trip.\(UUID().uuidString.lowercased().prefix(8))"
        try publisher.declareQueue(
            queue, arguments: [("x-queue-type", .string("quorum")), ("x-expires", .integer(60_000))])
        try publisher.enableConfirms()
        try consumer.setPrefetch(1)
        try consumer.consume(queue: queue)
        let body = Data(repeating: UInt8(ascii: "x"), count: bodySize)
        var samples: [Sample] = []
        samples.reserveCapacity(count)
        for index in 0..<(warmUp + count) {
            let start = DispatchTime.now().uptimeNanoseconds
            let messageId = UUID().uuidString
            let tag = try publisher.publish(
                OutgoingMessage(
                    exchange: "", routingKey: queue, messageId: messageId, type: "benchmark.round-trip",
                    timestamp: Date(),
                    body: body))
            let (nacked, returned) = try publisher.waitForConfirms(from: tag, through: tag, timeout: 10)
            guard nacked.isEmpty, returned.isEmpty else { throw AMQPError("the broker refused a round-trip message") }
            let confirmed = DispatchTime.now().uptimeNanoseconds
            var delivery: Delivery?
            while delivery == nil {
                guard DispatchTime.now().uptimeNanoseconds - start < 10_000_000_000 else {
                    throw AMQPError("a round-trip message did not come back within 10 s")
                }
                delivery = try consumer.nextDelivery(timeout: 1)
            }
            guard let delivery, delivery.messageId == messageId else {
                throw AMQPError("the round-trip queue delivered another message")
            }
            try consumer.ack(delivery.tag)
            let acknowledged = DispatchTime.now().uptimeNanoseconds
            if index >= warmUp {
                samples.append(
                    Sample(
                        confirmed: Double(confirmed - start) / 1e9, acknowledged: Double(acknowledged - start) / 1e9))
            }
        }
        return samples
    }
}
