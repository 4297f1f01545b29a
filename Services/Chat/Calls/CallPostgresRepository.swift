import Contracts
import Foundation
import Messaging
import Postgres
import ServiceKit

/// Calls' rows: each change of state in one transaction with its events, under the call's row lock.
struct CallPostgresRepository: Sendable {
    let database: PostgresPool
    /// How long a call rings before it is missed.
    let ringTime: TimeInterval

    static let columns: SQL = """
        id, conversation_id, caller_id, callee_id, video, status, created_at, answered_at, ended_at
        """

    /// The caller starts a call in an open conversation of theirs: 404 for anyone else's, a closed one or none; 409
    /// when either of the two is in a call already, 403 once the caller deleted their account (the caller's membership
    /// is locked too: a start that waited for their erasure reads it as the erasure left it).
    func start(conversationId: UUID, caller: Identity, video: Bool) async throws -> Call {
        try await database.transaction { connection in
            guard
                let pair = try connection.query(
                    """
                    SELECT me.name, other.user_id AS callee_id, other.name AS callee_name, me.erased
                    FROM conversations c
                    JOIN conversation_members me ON me.conversation_id = c.id AND me.user_id = \(caller.userId)
                    JOIN conversation_members other ON other.conversation_id = c.id AND other.user_id <> \(caller.userId)
                    WHERE c.id = \(conversationId) AND c.status = 'open'
                    FOR SHARE OF c, me
                    """
                ).first
            else { throw ChatError.notFound }
            guard try !pair.decode("erased", as: Bool.self) else { throw ChatError.erased }
            let calleeId: UUID = try pair.decode("callee_id")
            let id = UUID()
            let call = try Call(
                row: try connection.query(
                    """
                    INSERT INTO calls (id, conversation_id, caller_id, callee_id, video, status)
                    VALUES (\(id), \(conversationId), \(caller.userId), \(calleeId), \(video), 'ringing')
                    RETURNING \(Self.columns)
                    """
                ).first!)
            let held: [UUID] = try connection.query(
                """
                INSERT INTO call_parties (user_id, call_id) VALUES (\(caller.userId), \(id)), (\(calleeId), \(id))
                ON CONFLICT (user_id) DO NOTHING RETURNING user_id
                """
            ).map { try $0.decode("user_id") }
            guard held.contains(caller.userId) else { throw ChatError.busy("You are in another call.") }
            guard held.contains(calleeId) else {
                throw ChatError.busy("\(try pair.decode("callee_name", as: String.self)) is in another call.")
            }
            try Outbox.append(
                CallRinging(
                    call: call, callerName: try pair.decode("name"),
                    expiresAt: call.createdAt.addingTimeInterval(ringTime)),
                on: connection)
            return call
        }
    }

    /// A party answers, declines or hangs up; 404 for anyone else.
    func act(_ verb: CallVerb, callId: UUID, userId: UUID) async throws -> Call {
        try await database.transaction { connection in
            guard let call = try Self.lock(callId, on: connection), call.isParty(userId) else {
                throw ChatError.callNotFound
            }
            let action = try CallRules.action(verb, byCaller: call.callerId == userId)
            return try Self.move(call, to: try call.status.after(action), on: connection)
        }
    }

    /// The call to a party, who may send the other a signal while it rings or is under way: the other's id.
    func signalTarget(callId: UUID, from userId: UUID) async throws -> UUID {
        let call = try await call(callId, of: userId)
        guard call.status.isLive else { throw ChatError.callOver("The call is \(call.status.rawValue).") }
        return call.callerId == userId ? call.calleeId : call.callerId
    }

    /// The call, to its parties.
    func call(_ id: UUID, of userId: UUID) async throws -> Call {
        guard
            let call = try await database.query("SELECT \(Self.columns) FROM calls WHERE id = \(id)").first.map(
                Call.init(row:)), call.isParty(userId)
        else { throw ChatError.callNotFound }
        return call
    }

    /// The calls that rang their time unanswered are missed, a few at a time, each in its own transaction with its
    /// events; replicas share the work (`SKIP LOCKED`). Answers how many.
    @discardableResult
    func ringOut() async throws -> Int {
        var missed = 0
        while true {
            let moved = try await database.transaction { connection -> Bool in
                guard
                    let call = try connection.query(
                        """
                        SELECT \(Self.columns) FROM calls
                        WHERE status = 'ringing' AND created_at <= now() - make_interval(secs => \(ringTime))
                        ORDER BY created_at LIMIT 1 FOR UPDATE SKIP LOCKED
                        """
                    ).first.map(Call.init(row:))
                else { return false }
                _ = try Self.move(call, to: try call.status.after(.ringOut), on: connection)
                return true
            }
            guard moved else { return missed }
            missed += 1
        }
    }

    // MARK: In other transactions

    /// The calls of a conversation whose match closed end with it.
    static func endCalls(conversationId: UUID, on connection: PostgresConnection) throws {
        let live = try connection.query(
            """
            SELECT \(columns) FROM calls WHERE conversation_id = \(conversationId) AND status IN ('ringing', 'active')
            FOR UPDATE
            """
        ).map(Call.init(row:))
        for call in live {
            _ = try move(call, to: try call.status.after(.matchClosed), on: connection)
        }
    }

    /// A person who deleted their account: their calls go, with who was in them (the other member's conversation
    /// keeps what it showed of them as their other messages, emptied).
    static func erase(_ userId: UUID, on connection: PostgresConnection) throws {
        try connection.query("DELETE FROM calls WHERE caller_id = \(userId) OR callee_id = \(userId)")
    }

    // MARK: Helpers

    private static func lock(_ id: UUID, on connection: PostgresConnection) throws -> Call? {
        try connection.query("SELECT \(columns) FROM calls WHERE id = \(id) FOR UPDATE").first.map(Call.init(row:))
    }

    /// Moves a locked call to `status`, with its events; a call that is over frees its parties and leaves a line in
    /// the conversation (a message of the caller's, which a missed call's callee is pushed).
    private static func move(_ call: Call, to status: CallStatus, on connection: PostgresConnection) throws -> Call {
        let moved = try Call(
            row: try connection.query(
                """
                UPDATE calls SET status = \(status.rawValue),
                    answered_at = CASE WHEN \(status.rawValue)::text = 'active' THEN now() ELSE answered_at END,
                    ended_at = CASE WHEN \(status.rawValue)::text = 'active' THEN NULL ELSE now() END
                WHERE id = \(call.id) RETURNING \(columns)
                """
            ).first!)
        if status == .active {
            try Outbox.append(CallAnswered(call: moved), on: connection)
            return moved
        }
        try connection.query("DELETE FROM call_parties WHERE call_id = \(call.id)")
        let seconds = moved.answeredAt.map { Int((moved.endedAt ?? Date()).timeIntervalSince($0)) } ?? 0
        try Outbox.append(CallEnded(call: moved, seconds: seconds), on: connection)
        if let line = CallRules.summary(status, seconds: seconds) {
            try ConversationPostgresRepository.appendCallLine(line, of: moved, on: connection)
        }
        return moved
    }
}

extension Call {
    init(row: PostgresRow) throws {
        self.init(
            id: try row.decode("id"), conversationId: try row.decode("conversation_id"),
            callerId: try row.decode("caller_id"), calleeId: try row.decode("callee_id"),
            video: try row.decode("video"), status: try row.decode("status"), createdAt: try row.decode("created_at"),
            answeredAt: try row.decode("answered_at"), endedAt: try row.decode("ended_at"))
    }

    func isParty(_ userId: UUID) -> Bool { userId == callerId || userId == calleeId }
}

extension CallStatus: PostgresDecodable {
    init?(postgresText: String) { self.init(rawValue: postgresText) }
}
