import Contracts
import Foundation
import Hummingbird
import MatchingCore
import Postgres
import ServiceKit

/// The exchange flow (Snack Exchange) as the matching executable wires it: its tables, its events, its routes.
public struct ExchangeFlow: MatchingFlow {
    public static let name = "exchange"

    /// What the flow publishes: its own events and the generic match events.
    public static let publishes = [
        ExchangeAgreed.type, ExchangeCancelled.type, ExchangeCompleted.type, QuestionAsked.type, MatchOpened.type,
        MatchClosed.type,
    ]

    /// The flow's tables, applied after matching's shared ones.
    public static let migrations: URL? = Bundle.module.url(forResource: "Migrations", withExtension: nil)!
    public static let openAPI: URL? = Bundle.module.url(forResource: "openapi", withExtension: "yaml")!

    let steps: ExchangeSteps

    public init(_ context: FlowContext) throws {
        steps = ExchangeSteps(database: context.database, campuses: try CampusPoints(context.configuration))
    }

    public static func partners(of userId: UUID, on connection: PostgresConnection) throws -> [UUID] {
        let exchanging: [UUID] = try connection.query(
            """
            SELECT CASE WHEN owner_id = \(userId) THEN taker_id ELSE owner_id END AS partner FROM exchanges
            WHERE status = 'in_progress' AND \(userId)::uuid IN (owner_id, taker_id)
            """
        ).map { try $0.decode("partner") }
        let asking = try ExchangePostgresRepository(connection: connection).questionPartners(of: userId)
        return Array(Set(exchanging + asking))
    }

    public static func erase(
        _ userId: UUID, configuration: ServiceConfiguration, on connection: PostgresConnection
    ) throws {
        try ExchangeSteps.erase(userId, rows: ExchangePostgresRepository(connection: connection))
    }

    public static func closeBetween(
        _ a: UUID, _ b: UUID, configuration: ServiceConfiguration, on connection: PostgresConnection
    ) throws {
        try ExchangeSteps.closeBetween(a, b, rows: ExchangePostgresRepository(connection: connection))
    }

    public func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        ExchangeController(steps: steps).addRoutes(to: router, verifier: verifier)
    }
}
