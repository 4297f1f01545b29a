import Foundation
import MatchingCore
import Postgres

/// The rides flow's use cases, each one transaction: lock through the repository, ask the rules, write, append the
/// events. Accepting turns a ride from `open` to `accepted` with a conditional UPDATE, and two unique partial indexes
/// keep one unfinished request per rider and one ride under way per driver, so that of any number of drivers on any
/// number of replicas exactly one wins.
public struct RideSteps: Sendable {
    let database: PostgresPool
    let settings: RideSettings
    let positions: PositionSender

    public init(database: PostgresPool, settings: RideSettings, positions: PositionSender = .discarding) {
        self.database = database
        self.settings = settings
        self.positions = positions
    }

    /// Runs `body` in one transaction with the flow's repository on its connection.
    func transaction<T: Sendable>(
        durable: Bool = true, _ body: @escaping @Sendable (RidesPostgresRepository) throws -> T
    ) async throws -> T {
        let onlineWindow = settings.onlineWindow
        return try await database.transaction(durable: durable) { connection in
            try body(RidesPostgresRepository(connection: connection, onlineWindow: onlineWindow))
        }
    }

    /// The steps inside the transaction of `repository`.
    func timerSteps(_ repository: RidesPostgresRepository) -> RideTimerSteps {
        RideTimerSteps(repository: repository, settings: settings)
    }
}
