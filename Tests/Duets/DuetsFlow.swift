import Contracts
import Foundation
import Hummingbird
import MatchingCore
import Messaging
import Postgres
import ServiceKit

/// A flow that exists only in the tests: two students paired for a duet. It is this folder and one line in the list
/// of flows matching is given (FourthFlowTests), and chat and notifications serve it without knowing it.
public struct DuetsFlow: MatchingFlow {
    public static let name = "duets"
    public static let publishes = [DuetPaired.type, DuetEnded.type, MatchOpened.type, MatchClosed.type]
    public static let migrations: URL? = Bundle.module.url(forResource: "Migrations", withExtension: nil)!
    public static let openAPI: URL? = Bundle.module.url(forResource: "openapi", withExtension: "yaml")!

    let database: PostgresPool

    public init(_ context: FlowContext) {
        database = context.database
    }

    public func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        let group = router.group("/v1/duets").add(middleware: AuthenticationMiddleware(verifier: verifier))
        group.post(use: pair)
        group.delete("/{id}", use: end)
    }

    struct PairRequest: Decodable {
        var partnerId: UUID
        var partnerName: String
        var song: String
    }

    struct Duet: ResponseEncodable {
        var id: UUID
        var song: String
    }

    /// Pairs the caller with a partner: the duet's own event for both, and the generic match that opens their chat.
    func pair(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Duet> {
        let caller = try context.requireIdentity()
        let input = try await request.decodeJSON(as: PairRequest.self, context: context)
        let duet = Duet(id: UUID(), song: input.song)
        try await database.transaction { connection in
            _ = try connection.query(
                """
                INSERT INTO duets (id, campus, singer_id, partner_id, song)
                VALUES (\(duet.id), \(caller.campus), \(caller.userId), \(input.partnerId), \(input.song))
                """)
            try Outbox.append(
                DuetPaired(duetId: duet.id, song: input.song, recipients: [caller.userId, input.partnerId]),
                on: connection)
            try Outbox.append(
                MatchOpened(
                    matchId: duet.id, flow: Self.name, campus: caller.campus,
                    members: [
                        MatchMember(userId: caller.userId, name: caller.name, role: "soprano"),
                        MatchMember(userId: input.partnerId, name: input.partnerName, role: "bass"),
                    ],
                    subject: input.song, version: 1),
                on: connection)
        }
        return EditedResponse(status: .created, response: duet)
    }

    /// Ends a duet of the caller's: both are told, and the match closes with its chat.
    func end(request: Request, context: ServiceRequestContext) async throws -> Response {
        let caller = try context.requireIdentity()
        let id = try context.id("duet")
        try await database.transaction { connection in
            let ended = try connection.query(
                """
                UPDATE duets SET ended = true
                WHERE id = \(id) AND NOT ended AND \(caller.userId) IN (singer_id, partner_id)
                RETURNING singer_id, partner_id
                """)
            guard let row = ended.first else { throw MatchingError.notFound("duet") }
            let members = [try row.decode("singer_id", as: UUID.self), try row.decode("partner_id", as: UUID.self)]
            try Outbox.append(DuetEnded(duetId: id, recipients: members), on: connection)
            try Outbox.append(
                MatchClosed(matchId: id, flow: Self.name, reason: "completed", memberIds: members, version: 2),
                on: connection)
        }
        return Response(status: .noContent)
    }
}

/// Two students paired for a song; both are told.
public struct DuetPaired: Event {
    public static let type = "duet.paired"
    public var duetId: UUID
    public var song: String
    public var recipients: [UUID]
    public var version: Int64 = 1
    public var aggregateId: UUID { duetId }

    public init(duetId: UUID, song: String, recipients: [UUID]) {
        self.duetId = duetId
        self.song = song
        self.recipients = recipients
    }
}

/// A duet ended; both are told.
public struct DuetEnded: Event {
    public static let type = "duet.ended"
    public var duetId: UUID
    public var recipients: [UUID]
    public var version: Int64 = 2
    public var aggregateId: UUID { duetId }

    public init(duetId: UUID, recipients: [UUID]) {
        self.duetId = duetId
        self.recipients = recipients
    }
}
