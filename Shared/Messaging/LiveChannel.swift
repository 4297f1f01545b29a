import Dispatch
import Foundation
import Logging
import NIOConcurrencyHelpers
import ServiceLifecycle

/// One process's live link to an exchange: an exclusive, server-named queue bound to the routing keys the
/// process currently wants (the users whose sockets it holds), and fire-and-forget publishing. Nothing here is
/// durable: what must not be lost lives in the database, and this only makes it arrive at once.
///
/// A channel that receives also knows whether another process receives on the exchange (`othersListen`, `Peers`),
/// so that a consumer in its process publishes to the broker only what another process may need.
public final class LiveChannel: Service, Sendable {
    public typealias Receiver = @Sendable (_ routingKey: String, _ body: Data) -> Void

    private enum Command {
        case bind(String, @Sendable () -> Void)
        case unbind(String)
        case publish(String, Data)
    }

    let exchange: String
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
    /// The other processes that receive on the exchange, as far as this one knows.
    private let peers: NIOLockedValueBox<Peers>
    /// Binds wait for this: set once the first hello had its time to be answered.
    private let acquainted = NIOLockedValueBox<(done: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// `helloInterval`: how often a receiving channel tells the others it is there; a peer not heard from for three
    /// of them is gone.
    public init(
        exchange: String, amqpURL: String, status: BrokerStatus, logger: Logger, helloInterval: Duration = .seconds(10)
    ) {
        self.exchange = exchange
        self.amqpURL = amqpURL
        self.status = status
        self.logger = logger
        peers = NIOLockedValueBox(Peers(helloInterval: helloInterval))
    }

    /// Whether another process may receive what is published on the exchange: true until this channel knows
    /// otherwise (it receives, has said hello and waited for answers, and none is there).
    public var othersListen: Bool {
        peers.withLockedValue { $0.othersListen }
    }

    /// Where received messages go; set once before the service runs.
    public func onReceive(_ receiver: @escaping Receiver) {
        self.receiver.withLockedValue { $0 = ReceiverHolder(receiver) }
    }

    /// Starts receiving `key`; returns once the binding is in place, so nothing published after it is missed, and
    /// the other processes that publish have had their time to learn that this one listens.
    public func bind(_ key: String) async {
        await acquaintance()
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
        let receives = receiver.withLockedValue { $0 != nil }
        if !receives {
            peers.withLockedValue { $0.receivesNothing() }
            becomeAcquainted()
        }
        defer { becomeAcquainted() }
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
                if receives {
                    for key in [Peers.helloKey, Peers.key(of: peers.withLockedValue { $0.me })] {
                        try broker.bindQueue(queue, exchange: exchange, routingKey: key)
                    }
                    peers.withLockedValue { $0.connected() }
                }
                defer { if receives { try? sayGoodbye(broker) } }
                // NB: without acknowledgements: the queue lives only as long as this connection, so an ack would
                // keep nothing that a lost connection does not lose anyway, and each cost the broker a frame.
                try broker.consume(queue: queue, exclusive: true, acknowledged: false)
                status.set("live", connected: true)
                backoff.reset()
                while !loop.isStopping {
                    if receives { try greet(broker) }
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
                    if delivery.routingKey.hasPrefix(Peers.prefix) {
                        try heard(delivery, broker)
                        continue
                    }
                    receiver.withLockedValue { $0 }?.receive(delivery.routingKey, delivery.body)
                }
            } catch {
                status.set("live", connected: false)
                // NB: the next connection binds every wanted key anyway, so pending binds are released now rather
                // than left waiting, and pending hints are dropped.
                for case .bind(_, let done) in takeCommands() { done() }
                becomeAcquainted()
                let delay = backoff.nextDelay()
                logger.warning("live channel reconnecting", metadata: ["error": "\(error)", "delay": "\(delay)"])
                _ = loop.sleep(seconds: delay)
            }
        }
    }
}

extension LiveChannel {
    /// Waits until the first hello had its time to be answered (at once for a channel that only publishes).
    private func acquaintance() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = acquainted.withLockedValue { acquainted in
                if !acquainted.done { acquainted.waiting.append(continuation) }
                return acquainted.done
            }
            if done { continuation.resume() }
        }
    }

    private func becomeAcquainted() {
        let waiting = acquainted.withLockedValue { acquainted in
            defer { acquainted = (true, []) }
            return acquainted.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Says hello when one is due, and notes when the first one has had its time.
    private func greet(_ broker: AMQPConnection) throws {
        let (hello, answered) = peers.withLockedValue { $0.due() }
        if let hello { try say(hello, to: Peers.helloKey, broker) }
        if answered { becomeAcquainted() }
    }

    private func heard(_ delivery: Delivery, _ broker: AMQPConnection) throws {
        guard let message = try? JSONDecoder().decode(Peers.Message.self, from: delivery.body) else { return }
        let answer = peers.withLockedValue { $0.heard(message) }
        if let answer { try say(answer, to: Peers.key(of: message.from), broker) }
    }

    private func sayGoodbye(_ broker: AMQPConnection) throws {
        try say(peers.withLockedValue { Peers.Message(from: $0.me, kind: .goodbye) }, to: Peers.helloKey, broker)
    }

    private func say(_ message: Peers.Message, to key: String, _ broker: AMQPConnection) throws {
        _ = try broker.publish(
            OutgoingMessage(
                exchange: exchange, routingKey: key, messageId: UUID().uuidString.lowercased(), type: "live",
                timestamp: Date(), traceparent: nil, body: try JSONEncoder().encode(message)),
            mandatory: false, persistent: false)
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

    /// Whether the broker must carry `message` too: it is for another exchange, or another process may hold a socket
    /// it is for. Asked after the message was delivered here, so that a process that learns of a new one after the
    /// ask committed what it delivered before the new one takes sockets (`LiveChannel.bind`).
    func needsBroker(_ message: LiveMessage) -> Bool {
        guard let channel = channel.withLockedValue({ $0 }), message.exchange == channel.exchange else { return true }
        return channel.othersListen
    }
}
