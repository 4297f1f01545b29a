import Contracts
import Hummingbird
import MatchingCore
import Postgres
import ServiceKit

/// The delivery flow (Tarrare) as the matching executable wires it: its events, its timers, its routes.
public struct DeliveryFlow: Sendable {
    public static let name = "delivery"

    /// What the flow publishes: its own events and the generic match events.
    public static let publishes = [
        RunOpened.type, RunClosed.type, OrderPlaced.type, OrderExpired.type, OfferMade.type, OfferDeclined.type,
        OfferExpired.type, OfferWithdrawn.type, MatchAccepted.type, MatchCancelled.type, MatchCompleted.type,
        MatchOpened.type, MatchClosed.type,
    ]

    let repository: DeliveryPostgresRepository
    let settings: DeliverySettings
    let positions: PositionSender

    /// The flow; `positions` carries each match's deliverer's position to its orderer.
    public init(database: PostgresPool, configuration: ServiceConfiguration, positions: PositionSender) throws {
        settings = try DeliverySettings(configuration)
        self.positions = positions
        repository = DeliveryPostgresRepository(database: database, settings: settings, positions: positions)
    }

    public var timerHandlers: TimerHandlers {
        DeliveryPostgresRepository.timerHandlers(settings: settings, positions: positions)
    }

    public func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        DeliveryController(repository: repository, settings: settings).addRoutes(to: router, verifier: verifier)
    }
}
