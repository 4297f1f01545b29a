import Foundation
import Logging
import ServiceKit
import Testing

@testable import Delivery
@testable import MatchingCore
@testable import Rides

/// A flow's settings carry its name; the names earlier versions read still work.
@Suite struct FlowSettingsTests {
    let logger = Logger(label: "test")

    func configuration(_ environment: [String: String]) throws -> ServiceConfiguration {
        try ServiceConfiguration(service: "matching", defaultPort: 8083, environment: environment)
    }

    @Test func aFlowPrefixedSettingIsRead() throws {
        let settings = try DeliverySettings(configuration(["DELIVERY_OFFER_WINDOW_SECONDS": "7"]), logger: logger)

        #expect(settings.offerWindow == 7)
    }

    @Test func anEarlierNameStillWorksAndThePrefixedOneWins() throws {
        let old = try DeliverySettings(configuration(["OFFER_WINDOW_SECONDS": "9"]), logger: logger)
        let both = try DeliverySettings(
            configuration(["OFFER_WINDOW_SECONDS": "9", "DELIVERY_OFFER_WINDOW_SECONDS": "7"]), logger: logger)
        let ride = try RideSettings(configuration(["RIDE_OFFER_COUNT": "5"]), logger: logger)

        #expect(old.offerWindow == 9)
        #expect(both.offerWindow == 7)
        #expect(ride.offerCount == 5)
    }

    @Test func theEarlierNameIsReadOnlyWhenItAloneIsSet() throws {
        let said = try configuration(["RIDE_OFFER_COUNT": "5", "RIDES_OFFER_ROUNDS": "2"])

        #expect(
            said.flowSetting("rides", "OFFER_COUNT", formerly: "RIDE_OFFER_COUNT", logger: logger) == "RIDE_OFFER_COUNT"
        )
        #expect(
            said.flowSetting("rides", "OFFER_ROUNDS", formerly: "RIDE_OFFER_ROUNDS", logger: logger)
                == "RIDES_OFFER_ROUNDS")
        #expect(
            said.flowSetting("rides", "LIFETIME_SECONDS", formerly: "RIDE_LIFETIME_SECONDS", logger: logger)
                == "RIDES_LIFETIME_SECONDS")
    }
}
