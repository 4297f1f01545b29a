import Foundation
import Testing

@testable import MatchingCore

@Suite struct PositionPacingTests {
    @Test func aPositionGoesAtOnceASecondAfterTheLastFrameAndOtherwiseWaitsForOneTimer() {
        let sent = Date(timeIntervalSince1970: 1_000)

        #expect(PositionPacing.decide(lastSentAt: nil, isPending: false, now: sent) == .sendNow)
        #expect(PositionPacing.decide(lastSentAt: sent, isPending: false, now: sent + 1) == .sendNow)
        #expect(PositionPacing.decide(lastSentAt: sent, isPending: false, now: sent + 0.3) == .sendAt(sent + 1))
        #expect(PositionPacing.decide(lastSentAt: sent, isPending: true, now: sent + 0.6) == .leaveToTimer)
        #expect(PositionPacing.decide(lastSentAt: sent, isPending: true, now: sent + 5) == .leaveToTimer)
    }
}
