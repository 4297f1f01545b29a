import Contracts
import Foundation
import Hummingbird
import Logging
import MatchingCore
import Postgres
import ServiceKit

/// The delivery flow (Tarrare) as the matching executable wires it: its tables, its events, its timers, its routes.
public struct DeliveryFlow: MatchingFlow {
    public static let name = "delivery"

    /// What the flow publishes: its own events and the generic match events.
    public static let publishes = [
        RunOpened.type, RunClosed.type, OrderPlaced.type, OrderOpened.type, OrderTaken.type, OrderExpired.type,
        OfferMade.type, OfferDeclined.type,
        OfferExpired.type, OfferWithdrawn.type, MatchAccepted.type, MatchCancelled.type, MatchCompleted.type,
        MatchOpened.type, MatchClosed.type,
    ]

    /// The flow's tables, applied after matching's shared ones.
    public static let migrations: URL? = Bundle.module.url(forResource: "Migrations", withExtension: nil)!
    public static let openAPI: URL? = Bundle.module.url(forResource: "openapi", withExtension: "yaml")!

    let steps: DeliverySteps
    let settings: DeliverySettings
    let positions: PositionSender

    /// The flow; its positions carry each match's deliverer's position to its orderer.
    public init(_ context: FlowContext) throws {
        settings = try DeliverySettings(context.configuration, logger: context.logger)
        positions = context.positions
        steps = DeliverySteps(database: context.database, settings: settings, positions: positions)
    }

    public var timerHandlers: TimerHandlers { Self.timerHandlers(settings: settings, positions: positions) }

    /// What the flow does when its timers are due (`DeliveryTimerSteps.TimerKind`).
    public static func timerHandlers(settings: DeliverySettings, positions: PositionSender = .discarding)
        -> TimerHandlers
    {
        TimerHandlers(flow: name, kinds: DeliveryTimerSteps.TimerKind.self, positions: positions) {
            kind, target, connection in
            try DeliveryTimerSteps(connection: connection, settings: settings).timerIsDue(kind, target)
        }
    }

    public static func closeBetween(
        _ a: UUID, _ b: UUID, configuration: ServiceConfiguration, on connection: PostgresConnection
    ) throws {
        let settings = try DeliverySettings(configuration, logger: Logger(label: "matching"))
        try DeliveryTimerSteps(connection: connection, settings: settings).closeBetween(a, b)
    }

    public static func erase(
        _ userId: UUID, configuration: ServiceConfiguration, on connection: PostgresConnection
    ) throws {
        let settings = try DeliverySettings(configuration, logger: Logger(label: "matching"))
        try DeliveryTimerSteps(connection: connection, settings: settings).erase(userId)
    }

    public static func partners(of userId: UUID, on connection: PostgresConnection) throws -> [UUID] {
        try connection.query(
            """
            SELECT CASE WHEN orderer_id = \(userId) THEN deliverer_id ELSE orderer_id END AS partner FROM matches
            WHERE status = 'active' AND \(userId)::uuid IN (orderer_id, deliverer_id)
            UNION
            SELECT CASE WHEN o.orderer_id = \(userId) THEN f.deliverer_id ELSE o.orderer_id END FROM offers f
            JOIN orders o ON o.id = f.order_id
            WHERE f.status = 'pending' AND \(userId)::uuid IN (o.orderer_id, f.deliverer_id)
            """
        ).map { try $0.decode("partner") }
    }

    public func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        DeliveryController(steps: steps, settings: settings).addRoutes(to: router, verifier: verifier)
    }
}
