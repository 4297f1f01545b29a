import Dispatch
import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// One process's live link to an exchange: an exclusive, server-named queue bound to the routing keys the
/// process currently wants (the users whose sockets it holds), and fire-and-forget publishing. Nothing here is
/// durable: what must not be lost lives in the database, and this only makes it arrive at once.
public final class LiveChannel: Service, Sendable {
    public typealias Receiver = @Sendable (_ routingKey: String, _ body: Data) -> Void

    private enum Command {
        case bind(String, @Sendable () -> Void)
        case unbind(String)
        case publish(String, Data)
    }

    private let exchange: String
    private let amqpURL: String
    private let status: BrokerStatus
    private let logger: Logger
    /// NB: the closure is kept in a class: a function value kept directly in a generic box gains two reabstraction
    /// thunks every time it is read back through the box's `inout`, so each delivery cost more than the one before.
    private final class ReceiverHolder: Sendable {
        let receive: Receiver
        init(_ receive: @escaping Receiver) { self.receive = receive }
    }

    private let receiver = NIOLockedValueBox<ReceiverHolder?>(nil)
    private let commands = NIOLockedValueBox<[Command]>([])
    /// Signalled when a command joins an empty list, so that a channel that receives nothing acts on it at once.
    private let commandQueued = DispatchSemaphore(value: 0)
    /// How many sockets want each key; a key is bound while its count is above zero.
    private let wanted = NIOLockedValueBox<[String: Int]>([:])

    public init(exchange: String, amqpURL: String, status: BrokerStatus, logger: Logger) {
        self.exchange = exchange
        self.amqpURL = amqpURL
        self.status = status
        self.logger = logger
    }

    /// Where received messages go; set once before the service runs.
    public func onReceive(_ receiver: @escaping Receiver) {
        self.receiver.withLockedValue { $0 = ReceiverHolder(receiver) }
    }

    /// Starts receiving `key`; returns once the binding is in place, so nothing published after it is missed.
    public func bind(_ key: String) async {
        let isFirst = wanted.withLockedValue { wanted -> Bool in
            wanted[key, default: 0] += 1
            return wanted[key] == 1
        }
        guard isFirst else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            enqueue(.bind(key, { continuation.resume() }))
        }
    }

    public func unbind(_ key: String) {
        let isLast = wanted.withLockedValue { wanted -> Bool in
            wanted[key, default: 0] -= 1
            if wanted[key, default: 0] <= 0 {
                wanted[key] = nil
                return true
            }
            return false
        }
        if isLast { enqueue(.unbind(key)) }
    }

    /// Publishes without confirms; lost if the broker is away, which suits what is only a hint (typing).
    public func publish(routingKey: String, body: Data) {
        enqueue(.publish(routingKey, body))
    }

    /// Hands the messages for this channel's exchange straight to the receiver, as if they had arrived. A consumer
    /// in the same process does this once its batch committed (`LiveLoopback`), so that the sockets this process
    /// holds get their entries without the broker's round trip; the broker's copies, which every other process
    /// needs, arrive here too, and the receiver drops what it already has.
    func deliverHere(_ messages: [LiveMessage]) {
        guard let receive = receiver.withLockedValue({ $0?.receive }) else { return }
        for message in messages where message.exchange == exchange {
            receive(message.routingKey, message.body)
        }
    }

    private func enqueue(_ command: Command) {
        let wasEmpty = commands.withLockedValue { commands in
            defer { commands.append(command) }
            return commands.isEmpty
        }
        if wasEmpty { commandQueued.signal() }
    }

    public func run() async throws {
        status.set("live", connected: false)
        try await BlockingLoop().run { loop in self.serve(loop) }
    }

    private func takeCommands() -> [Command] {
        commands.withLockedValue { commands in
            defer { commands.removeAll() }
            return commands
        }
    }

    private func serve(_ loop: BlockingLoop) {
        var backoff = Backoff()
        while !loop.isStopping {
            do {
                let broker = try AMQPConnection(url: amqpURL)
                defer { broker.close() }
                try broker.declareExchange(exchange, type: "topic")
                let queue = try broker.declareExclusiveQueue()
                // After a reconnect the new queue needs every key still wanted.
                for key in wanted.withLockedValue({ Array($0.keys) }) {
                    try broker.bindQueue(queue, exchange: exchange, routingKey: key)
                }
                // NB: without acknowledgements: the queue lives only as long as this connection, so an ack would
                // keep nothing that a lost connection does not lose anyway, and each cost the broker a frame.
                try broker.consume(queue: queue, exclusive: true, acknowledged: false)
                status.set("live", connected: true)
                backoff.reset()
                while !loop.isStopping {
                    for command in takeCommands() {
                        switch command {
                        case .bind(let key, let done):
                            try broker.bindQueue(queue, exchange: exchange, routingKey: key)
                            done()
                        case .unbind(let key):
                            if wanted.withLockedValue({ $0[key] == nil }) {
                                try broker.unbindQueue(queue, exchange: exchange, routingKey: key)
                            }
                        case .publish(let key, let body):
                            _ = try broker.publish(
                                OutgoingMessage(
                                    exchange: exchange, routingKey: key, messageId: UUID().uuidString.lowercased(),
                                    type: "live", timestamp: Date(), traceparent: nil, body: body), mandatory: false,
                                persistent: false)
                        }
                    }
                    // NB: a channel bound to no key (matching's, which only publishes positions) waits for its next
                    // command rather than in a read of the socket, which held each frame back for up to the read's
                    // 50 ms; it still reads without waiting, for the broker's heartbeats and closes.
                    let receivesNothing = wanted.withLockedValue { $0.isEmpty }
                    if receivesNothing { _ = commandQueued.wait(timeout: .now() + 0.05) }
                    guard let delivery = try broker.nextDelivery(timeout: receivesNothing ? 0 : 0.05) else { continue }
                    receiver.withLockedValue { $0 }?.receive(delivery.routingKey, delivery.body)
                }
            } catch {
                status.set("live", connected: false)
                // NB: the next connection binds every wanted key anyway, so pending binds are released now rather
                // than left waiting, and pending hints are dropped.
                for case .bind(_, let done) in takeCommands() { done() }
                let delay = backoff.nextDelay()
                logger.warning("live channel reconnecting", metadata: ["error": "\(error)", "delay": "\(delay)"])
                _ = loop.sleep(seconds: delay)
            }
        }
    }
}

/// The live channel of a consumer's own process, if it has one (set once, before the consumer runs): it gets the
/// live messages of each committed batch before the broker does.
public final class LiveLoopback: Sendable {
    private let channel = NIOLockedValueBox<LiveChannel?>(nil)

    public init() {}

    public func connect(_ channel: LiveChannel) {
        self.channel.withLockedValue { $0 = channel }
    }

    func deliver(_ messages: [LiveMessage]) {
        guard !messages.isEmpty, let channel = channel.withLockedValue({ $0 }) else { return }
        channel.deliverHere(messages)
    }
}
