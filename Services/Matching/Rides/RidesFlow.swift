import Contracts
import Foundation
import Hummingbird
import Logging
import MatchingCore
import Postgres
import ServiceKit

/// The rides flow (My Driver) as the matching executable wires it: its tables, its events, its timers, its routes.
public struct RidesFlow: MatchingFlow {
    public static let name = "rides"

    /// What the flow publishes: its own events and the generic match events.
    public static let publishes = [
        RideOffered.type, RideAccepted.type, RideCancelled.type, RideReopened.type, RideArrived.type, RideStarted.type,
        RideCompleted.type, RideExpired.type, MatchOpened.type, MatchClosed.type,
    ]

    /// The flow's tables, applied after matching's shared ones.
    public static let migrations: URL? = Bundle.module.url(forResource: "Migrations", withExtension: nil)!
    public static let openAPI: URL? = Bundle.module.url(forResource: "openapi", withExtension: "yaml")!

    let steps: RideSteps
    let settings: RideSettings
    let positions: PositionSender

    /// The flow; its positions carry each ride's driver's position to its rider.
    public init(_ context: FlowContext) throws {
        settings = try RideSettings(context.configuration, logger: context.logger)
        positions = context.positions
        steps = RideSteps(database: context.database, settings: settings, positions: positions)
    }

    public var timerHandlers: TimerHandlers { Self.timerHandlers(settings: settings, positions: positions) }

    public static func partners(of userId: UUID, on connection: PostgresConnection) throws -> [UUID] {
        try connection.query(
            """
            SELECT CASE WHEN rider_id = \(userId) THEN driver_id ELSE rider_id END AS partner FROM rides
            WHERE status IN ('accepted', 'arrived', 'started') AND \(userId)::uuid IN (rider_id, driver_id)
            """
        ).map { try $0.decode("partner") }
    }

    public static func erase(
        _ userId: UUID, configuration: ServiceConfiguration, on connection: PostgresConnection
    ) throws {
        let settings = try RideSettings(configuration, logger: Logger(label: "matching"))
        try RideSteps.erase(userId, settings: settings, on: connection)
    }

    public static func closeBetween(
        _ a: UUID, _ b: UUID, configuration: ServiceConfiguration, on connection: PostgresConnection
    ) throws {
        let settings = try RideSettings(configuration, logger: Logger(label: "matching"))
        try RideSteps.closeBetween(a, b, settings: settings, on: connection)
    }

    /// What the flow does when its timers are due (`RideTimerSteps.TimerKind`).
    public static func timerHandlers(settings: RideSettings, positions: PositionSender = .discarding) -> TimerHandlers {
        TimerHandlers(flow: name, kinds: RideTimerSteps.TimerKind.self, positions: positions) {
            kind, target, connection in
            let repository = RidesPostgresRepository(connection: connection, onlineWindow: settings.onlineWindow)
            return try RideTimerSteps(repository: repository, settings: settings).timerIsDue(kind, target)
        }
    }

    public func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        RidesController(steps: steps).addRoutes(to: router, verifier: verifier)
    }
}
