import Contracts
import Foundation
import Hummingbird
import MatchingCore
import Postgres
import ServiceKit

/// The tutoring flow (MentorMate) as the matching executable wires it: its tables, its events, its routes.
public struct TutoringFlow: MatchingFlow {
    public static let name = "tutoring"

    /// What the flow publishes: its own events and the generic match events.
    public static let publishes = [TutoringMatched.type, TutoringUnmatched.type, MatchOpened.type, MatchClosed.type]

    /// The flow's tables, applied after matching's shared ones.
    public static let migrations: URL? = Bundle.module.url(forResource: "Migrations", withExtension: nil)!
    public static let openAPI: URL? = Bundle.module.url(forResource: "openapi", withExtension: "yaml")!

    let steps: TutoringSteps

    public init(_ context: FlowContext) {
        steps = TutoringSteps(database: context.database)
    }

    public static func partners(of userId: UUID, on connection: PostgresConnection) throws -> [UUID] {
        try connection.query(
            """
            SELECT CASE WHEN first_id = \(userId) THEN second_id ELSE first_id END AS partner FROM tutoring_matches
            WHERE status = 'active' AND \(userId)::uuid IN (first_id, second_id)
            """
        ).map { try $0.decode("partner") }
    }

    public static func erase(
        _ userId: UUID, configuration: ServiceConfiguration, on connection: PostgresConnection
    ) throws {
        try TutoringPostgresRepository(connection: connection).erase(userId)
    }

    public static func closeBetween(
        _ a: UUID, _ b: UUID, configuration: ServiceConfiguration, on connection: PostgresConnection
    ) throws {
        try TutoringSteps.closeBetween(a, b, rows: TutoringPostgresRepository(connection: connection))
    }

    public func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        TutoringController(steps: steps).addRoutes(to: router, verifier: verifier)
    }
}
