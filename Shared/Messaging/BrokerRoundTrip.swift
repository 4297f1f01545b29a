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
        try await withTrip { trip in
            var samples: [Sample] = []
            samples.reserveCapacity(count)
            for index in 0..<(warmUp + count) {
                let sample = try trip.run(acknowledging: true)
                if index >= warmUp { samples.append(sample.times) }
            }
            return samples
        }
    }

    /// A message every 1/`rate` s for `seconds` (each at its time, or at once when the last took longer), each
    /// published, confirmed and consumed before the next, with `alongside` run just before each publish. The consumer
    /// acknowledges what it received every 50 ms, as the services' consumers do. Returns how many were sent: what the
    /// broker spends on the durability of a message at a given rate, with nothing else of the system's around it.
    public func pace(rate: Double, seconds: Double, alongside: @escaping @Sendable () throws -> Void) async throws
        -> Int
    {
        try await withTrip { trip in
            let start = DispatchTime.now().uptimeNanoseconds
            let interval = 1e9 / rate
            var sent = 0
            var lastAck = start
            var unacknowledged: UInt64?
            while Double(sent) * interval < seconds * 1e9 {
                let due = start + UInt64(Double(sent) * interval)
                let now = DispatchTime.now().uptimeNanoseconds
                if due > now { usleep(useconds_t((due - now) / 1000)) }
                try alongside()
                unacknowledged = try trip.run(acknowledging: false).tag
                sent += 1
                if let tag = unacknowledged, DispatchTime.now().uptimeNanoseconds - lastAck >= 50_000_000 {
                    try trip.consumer.ack(tag, andEveryEarlier: true)
                    lastAck = DispatchTime.now().uptimeNanoseconds
                    unacknowledged = nil
                }
            }
            if let tag = unacknowledged { try trip.consumer.ack(tag, andEveryEarlier: true) }
            return sent
        }
    }

    /// Runs `body` with a `Trip` on a thread of its own (its calls block).
    private func withTrip<T: Sendable>(_ body: @escaping @Sendable (Trip) throws -> T) async throws -> T {
        let thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        defer { thread.shutdownGracefully { _ in } }
        let url = url
        let bodySize = bodySize
        return try await thread.runIfActive {
            let trip = try Trip(url: url, bodySize: bodySize)
            defer { trip.close() }
            return try body(trip)
        }
    }

    /// A publisher with confirms and a consumer of a quorum queue made for the measurement.
    private struct Trip {
        // NB: confirms and consuming need separate connections: frames read while waiting for one cannot be put back.
        let publisher: AMQPConnection
        let consumer: AMQPConnection
        let queue = "benchmark.round-trip.\(UUID().uuidString.lowercased().prefix(8))"
        let body: Data

        init(url: String, bodySize: Int) throws {
            publisher = try AMQPConnection(url: url)
            consumer = try AMQPConnection(url: url)
            body = Data(repeating: UInt8(ascii: "x"), count: bodySize)
            try publisher.declareQueue(
                queue, arguments: [("x-queue-type", .string("quorum")), ("x-expires", .integer(60_000))])
            try publisher.enableConfirms()
            // NB: room for what waits for the next acknowledgement of `pace`.
            try consumer.setPrefetch(1000)
            try consumer.consume(queue: queue)
        }

        func close() {
            publisher.close()
            consumer.close()
        }

        /// Publishes a message, waits for its confirm and then for its delivery, and acknowledges that delivery when
        /// `acknowledging` (else a later acknowledgement of every earlier one takes it in).
        func run(acknowledging: Bool) throws -> (times: Sample, tag: UInt64) {
            let start = DispatchTime.now().uptimeNanoseconds
            let messageId = UUID().uuidString
            let tag = try publisher.publish(
                OutgoingMessage(
                    exchange: "", routingKey: queue, messageId: messageId, type: "benchmark.round-trip",
                    timestamp: Date(), body: body))
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
            if acknowledging { try consumer.ack(delivery.tag) }
            let acknowledged = DispatchTime.now().uptimeNanoseconds
            return (
                Sample(confirmed: Double(confirmed - start) / 1e9, acknowledged: Double(acknowledged - start) / 1e9),
                delivery.tag
            )
        }
    }
}
