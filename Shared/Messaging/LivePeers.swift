import Foundation

/// What a receiving live channel knows of the other processes that receive on its exchange. Each says hello when it
/// connects and every `helloInterval` after; each that hears a hello answers its sender alone; one that stops says
/// goodbye; a peer not heard from for three intervals is gone. After each connection, until its hello has had
/// `answerTime` to be answered, the channel assumes that others listen.
struct Peers {
    static let prefix = "peers."
    static let helloKey = "peers.hello"
    /// How long the hello of a new connection waits for answers before the channel believes no answer.
    static let answerTime = Duration.milliseconds(500)

    static func key(of process: UUID) -> String { prefix + process.uuidString.lowercased() }

    struct Message: Codable {
        enum Kind: String, Codable { case hello, here, goodbye }
        var from: UUID
        var kind: Kind
    }

    let me = UUID()
    let helloInterval: Duration
    private var others: [UUID: ContinuousClock.Instant] = [:]
    private var lastHello: ContinuousClock.Instant?
    /// Since when the hello of the current connection waits for answers; nil once they had their time.
    private var answersSince: ContinuousClock.Instant?
    private var sure = false
    private var onlyPublishes = false

    init(helloInterval: Duration) {
        self.helloInterval = helloInterval
    }

    /// Whether another process may receive on the exchange: true for a channel that only publishes (it has no one
    /// to compare with), and until a connection's hello had its time.
    var othersListen: Bool { onlyPublishes || !sure || !others.isEmpty }

    mutating func receivesNothing() {
        onlyPublishes = true
    }

    /// A new connection, whose queue no one knows yet: a hello is due at once.
    mutating func connected() {
        lastHello = nil
        answersSince = ContinuousClock.now
        sure = false
    }

    /// The hello to send now, if one is due, and whether the current connection's hello has just had its time.
    mutating func due() -> (hello: Message?, answered: Bool) {
        let now = ContinuousClock.now
        var hello: Message?
        if lastHello.map({ now - $0 >= helloInterval }) ?? true {
            hello = Message(from: me, kind: .hello)
            lastHello = now
            others = others.filter { now - $0.value < helloInterval * 3 }
        }
        guard let since = answersSince, now - since >= Self.answerTime else { return (hello, false) }
        answersSince = nil
        sure = true
        return (hello, true)
    }

    /// Notes what a peer said; returns the answer to send it, if any.
    mutating func heard(_ message: Message) -> Message? {
        guard message.from != me else { return nil }
        switch message.kind {
        case .hello:
            others[message.from] = ContinuousClock.now
            return Message(from: me, kind: .here)
        case .here:
            others[message.from] = ContinuousClock.now
        case .goodbye:
            others[message.from] = nil
        }
        return nil
    }
}
