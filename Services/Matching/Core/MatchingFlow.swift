import Foundation
import Hummingbird
import Logging
import Postgres
import ServiceKit

/// A flow as the matching executable carries it: a folder of its own that says who it is, what it publishes, which
/// tables it makes, and which routes and timers it has. `matching` iterates the flows it is given; adding one is its
/// folder and a line in that list.
public protocol MatchingFlow: Sendable {
    /// The flow's name: its timers' `flow`, its settings' prefix (`<NAME>_`), `match.opened`'s `flow`.
    static var name: String { get }
    /// What it publishes: its own events and the generic match events.
    static var publishes: [String] { get }
    /// Its folder of migrations, applied after matching's shared ones, flow after flow. NB: `schema_migrations`
    /// records a migration by its file name alone, so a flow's names must be its own (`0001_rides.sql`).
    static var migrations: URL? { get }
    /// Its part of matching's OpenAPI description: its paths and the schemas only it uses.
    static var openAPI: URL? { get }

    /// Reads the flow's settings and makes its parts.
    init(_ context: FlowContext) throws

    func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier)

    /// What the shared scheduler calls when one of the flow's timers is due.
    var timerHandlers: TimerHandlers { get }

    /// Closes what is open between two students one of whom just blocked the other (matches with reason `blocked`,
    /// and their conversations with them; offers between them withdrawn), in the transaction of the block's event.
    static func closeBetween(
        _ a: UUID, _ b: UUID, configuration: ServiceConfiguration, on connection: PostgresConnection
    ) throws

    /// The students with something open with `userId` in the flow (a match, an offer): what a suspension closes, pair by
    /// pair, with `closeBetween`.
    static func partners(of userId: UUID, on connection: PostgresConnection) throws -> [UUID]

    /// Erases a student who deleted their account from the flow, in the transaction of `user.deleted`, after what was
    /// open with anyone closed as a suspension closes it: what they still had open is withdrawn through the flow's own
    /// transitions and events, and what others keep (a finished match) no longer names them nor holds what they wrote.
    static func erase(
        _ userId: UUID, configuration: ServiceConfiguration, on connection: PostgresConnection
    ) throws
}

extension MatchingFlow {
    public static var migrations: URL? { nil }
    public static var openAPI: URL? { nil }
    public var timerHandlers: TimerHandlers { TimerHandlers() }
    public static func closeBetween(
        _ a: UUID, _ b: UUID, configuration: ServiceConfiguration, on connection: PostgresConnection
    ) throws {}
    public static func partners(of userId: UUID, on connection: PostgresConnection) throws -> [UUID] { [] }
    public static func erase(
        _ userId: UUID, configuration: ServiceConfiguration, on connection: PostgresConnection
    ) throws {}
}

/// What every flow is made from.
public struct FlowContext: Sendable {
    public let database: PostgresPool
    public let configuration: ServiceConfiguration
    /// Carries a match's live position to the other member (frames on notifications' live exchange).
    public let positions: PositionSender
    public let logger: Logger

    public init(database: PostgresPool, configuration: ServiceConfiguration, positions: PositionSender, logger: Logger)
    {
        self.database = database
        self.configuration = configuration
        self.positions = positions
        self.logger = logger
    }
}

extension ServiceConfiguration {
    /// The variable that holds a flow's setting: `<FLOW>_<name>` (`<FLOW>_OFFER_WINDOW_SECONDS`), or, when only it
    /// is set, the name earlier versions read (`formerly`, by default `name` alone), which still works and is said to
    /// be deprecated at start-up.
    public func flowSetting(_ flow: String, _ name: String, formerly: String? = nil, logger: Logger) -> String {
        let current = "\(flow.uppercased())_\(name)"
        let old = formerly ?? name
        guard environment[current] == nil, environment[old] != nil else { return current }
        logger.warning("\(old) is deprecated: set \(current) instead")
        return old
    }
}
