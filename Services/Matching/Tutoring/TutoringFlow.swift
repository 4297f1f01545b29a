import Contracts
import Foundation
import Hummingbird
import MatchingCore
import Postgres
import ServiceKit

/// The tutoring flow (MentorMate) as the matching executable wires it: its tables, its events, its routes.
public struct TutoringFlow: Sendable {
    public static let name = "tutoring"

    /// What the flow publishes: its own events and the generic match events.
    public static let publishes = [TutoringMatched.type, TutoringUnmatched.type, MatchOpened.type, MatchClosed.type]

    /// The flow's tables, applied after matching's shared ones.
    public static let migrations = Bundle.module.url(forResource: "Migrations", withExtension: nil)!

    let repository: TutoringPostgresRepository

    public init(database: PostgresPool) {
        repository = TutoringPostgresRepository(database: database)
    }

    public func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        TutoringController(repository: repository).addRoutes(to: router, verifier: verifier)
    }
}
