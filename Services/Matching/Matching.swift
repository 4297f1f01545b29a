import Delivery
import Exchange
import MatchingCore
import Rides
import ServiceKit
import Tutoring

/// The flows the matching executable carries. A new flow is a folder of its own and a line here.
let matchingFlows: [any MatchingFlow.Type] = [
    DeliveryFlow.self,
    TutoringFlow.self,
    ExchangeFlow.self,
    RidesFlow.self,
]

/// The matching service: every flow that matches two students, over the read models, timers and generic match they
/// share (MatchingCore).
@main
struct Matching {
    static func main() async {
        await ServiceMain.run(service: "matching", defaultPort: 8083) {
            try await buildMatchingApplication($0, logger: $1, flows: matchingFlows)
        }
    }
}
