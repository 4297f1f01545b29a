import Foundation
import Logging
import ServiceLifecycle
import TestSupport
import Testing

@testable import Messaging

/// What a receiving live channel knows of the others on its exchange, without a broker.
@Suite struct PeersTests {
    @Test func aConnectionAssumesOthersListenUntilItsHelloHadItsTimeUnanswered() async throws {
        var peers = Peers(helloInterval: .seconds(10))
        #expect(peers.othersListen)

        peers.connected()
        let first = peers.due()
        #expect(first.hello?.kind == .hello)
        #expect(!first.answered)
        #expect(peers.due().hello == nil, "one hello an interval")
        #expect(peers.othersListen)

        try await Task.sleep(for: Peers.answerTime)
        #expect(peers.due().answered)
        #expect(!peers.othersListen)
    }

    @Test func aHelloIsAnsweredAndMakesAPeerAGoodbyeEndsIt() {
        var peers = Peers(helloInterval: .seconds(10))
        peers.connected()
        let other = UUID()

        #expect(peers.heard(.init(from: peers.me, kind: .hello)) == nil, "its own hello comes back and is no peer")
        let answer = peers.heard(.init(from: other, kind: .hello))
        #expect(answer?.kind == .here && answer?.from == peers.me)
        #expect(peers.othersListen)

        #expect(peers.heard(.init(from: other, kind: .goodbye)) == nil)
        #expect(peers.othersListen, "still within the hello's time")
    }

    @Test func aPeerNotHeardFromForThreeIntervalsIsGone() async throws {
        var peers = Peers(helloInterval: .milliseconds(100))
        peers.connected()
        try await Task.sleep(for: Peers.answerTime)
        _ = peers.heard(.init(from: UUID(), kind: .here))
        #expect(peers.due().answered)
        #expect(peers.othersListen)

        try await Task.sleep(for: .milliseconds(300))
        _ = peers.due()
        #expect(!peers.othersListen)
    }

    @Test func aChannelThatOnlyPublishesAlwaysCountsOnOthers() {
        var peers = Peers(helloInterval: .seconds(10))
        peers.receivesNothing()
        peers.connected()
        #expect(peers.othersListen)
    }
}

/// Two processes' live channels on one exchange of a real broker.
@Suite struct LiveChannelPeersTests {
    func channel(_ broker: TestBroker) -> LiveChannel {
        let channel = LiveChannel(
            exchange: "live.peers", amqpURL: broker.url, status: BrokerStatus(), logger: TestEnvironment.logger,
            helloInterval: .milliseconds(300))
        channel.onReceive { _, _ in }
        return channel
    }

    @Test func aChannelAloneStopsCountingOnOthersAndASecondOneIsKnownBeforeItTakesSockets() async throws {
        let broker = try await TestBroker.make()
        let first = channel(broker)
        let second = channel(broker)

        try await runBriefly([first]) {
            try await eventually("the first knows it is alone") { !first.othersListen }

            try await runBriefly([second]) {
                // NB: a bind returns once the channel's hello had its time: the first has heard it by then.
                await second.bind("user.someone")
                try await eventually("the first knows of the second") { first.othersListen }
                try await eventually("the second knows of the first") { second.othersListen }
            }
            try await eventually("the first hears the second's goodbye") { !first.othersListen }
        }
    }

    @Test func aConsumersLiveMessagesGoToTheBrokerOnlyWhereAnotherProcessMayNeedThem() async throws {
        let broker = try await TestBroker.make()
        let here = channel(broker)
        let loopback = LiveLoopback()
        loopback.connect(here)
        let mine = LiveMessage(exchange: "live.peers", routingKey: "user.a", body: Data())
        let elsewhere = LiveMessage(exchange: "live.other", routingKey: "user.a", body: Data())

        #expect(loopback.needsBroker(mine), "until the channel knows, others may listen")
        try await runBriefly([here]) {
            try await eventually("the channel knows it is alone") { !here.othersListen }
            #expect(!loopback.needsBroker(mine))
            #expect(loopback.needsBroker(elsewhere))

            let other = channel(broker)
            try await runBriefly([other]) {
                await other.bind("user.a")
                try await eventually("another process listens") { loopback.needsBroker(mine) }
            }
        }
    }
}
