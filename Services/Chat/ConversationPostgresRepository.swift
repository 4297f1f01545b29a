import Contracts
import Foundation
import Messaging
import Postgres

/// Chat's data in its own PostgreSQL database: the only file with SQL.
struct ConversationPostgresRepository: Sendable {
    let database: PostgresPool
    /// Messages sent while others commit go together, in one transaction.
    private let sends: GroupCommit
    /// Where a send hands its event to the relay (`OutboxHandOff`), when the service's relay is this process's.
    private let handOff: OutboxHandOff?

    init(database: PostgresPool, handOff: OutboxHandOff? = nil) {
        self.database = database
        sends = GroupCommit(database: database)
        self.handOff = handOff
    }

    /// The caller's open conversations, most recently active first, each with its other members.
    func openConversations(of userId: UUID) async throws -> [ConversationSummary] {
        try await database.query(
            """
            SELECT c.id, c.status = 'open' AS open, c.flow, c.subject,
                (SELECT coalesce(jsonb_agg(jsonb_build_object('id', cm.user_id, 'name', coalesce(u.name, cm.name), 'role', cm.role)
                        ORDER BY cm.position), '[]'::jsonb)::text
                    FROM conversation_members cm LEFT JOIN users u ON u.id = cm.user_id
                    WHERE cm.conversation_id = c.id AND cm.user_id <> \(userId)) AS others,
                last.id AS last_id, last.sender_id AS last_sender, last.text AS last_text, last.sent_at AS last_sent_at,
                last.removed_at IS NOT NULL AS last_removed,
                (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id AND m.sender_id <> \(userId)
                    AND m.seq > greatest(
                        (SELECT r.last_read_seq FROM read_markers r WHERE r.conversation_id = c.id AND r.user_id = \(userId)),
                        \(Self.lastWritten(by: userId, in: "c.id")), 0)
                ) AS unread
            FROM conversation_members me JOIN conversations c ON c.id = me.conversation_id
            LEFT JOIN LATERAL (SELECT * FROM messages m WHERE m.conversation_id = c.id ORDER BY m.seq DESC LIMIT 1) last ON true
            WHERE me.user_id = \(userId) AND c.status = 'open'
            ORDER BY coalesce(last.sent_at, c.opened_at) DESC
            """
        ).map { row in
            let id: UUID = try row.decode("id")
            let lastId: UUID? = try row.decode("last_id")
            let others = try JSONDecoder().decode(
                [ConversationSummary.Member].self, from: Data(try row.decode("others", as: String.self).utf8))
            return ConversationSummary(
                id: id, matchId: id, flow: try row.decode("flow"), subject: try row.decode("subject"),
                isOpen: try row.decode("open"), otherMembers: others,
                lastMessage: try lastId.map {
                    Message(
                        id: $0, conversationId: id, senderId: try row.decode("last_sender"),
                        text: try row.decode("last_text"), sentAt: try row.decode("last_sent_at"),
                        removed: try row.decode("last_removed"))
                },
                unreadCount: try row.decode("unread"))
        }
    }

    /// History newest first: up to `limit` messages sent before the message `before`. Members only, closed or not.
    func messages(conversationId: UUID, of userId: UUID, before: UUID?, limit: Int) async throws -> [Message] {
        try await database.transaction { connection in
            guard try Self.membership(conversationId, userId, on: connection) != nil else { throw ChatError.notFound }
            return try connection.query(
                """
                SELECT id, conversation_id, sender_id, text, sent_at, removed_at IS NOT NULL AS removed FROM messages
                WHERE conversation_id = \(conversationId)
                  AND (\(before)::uuid IS NULL OR seq < (SELECT seq FROM messages WHERE id = \(before) AND conversation_id = \(conversationId)))
                ORDER BY seq DESC LIMIT \(limit)
                """
            ).map(Message.init)
        }
    }

    /// Sends a message, or returns the one already sent with this id by this sender. The second value says
    /// whether it was new.
    ///
    /// One statement, so that a message costs the database at most one round trip and one commit, shared with the
    /// messages sent at the same moment (`GroupCommit`): it locks the membership against a closing, finds a message
    /// already sent with this id, and only when there is none, the conversation is open and the sender has not
    /// deleted their account stores the message and the event, whose recipients are the other members it found.
    /// The sender's read marker stays where it is: what they wrote last counts as read (`lastWritten`).
    ///
    /// NB: the sender's membership row is locked too, and an erasure marks it before it reads their messages: a send
    /// that got there first is committed before the erasure reads the messages, and one that waited for the erasure
    /// reads the row as the erasure left it (READ COMMITTED checks a locked row that changed again, as it is now).
    func send(id: UUID, conversationId: UUID, sender: UUID, senderName: String, text: String) async throws -> (
        Message, Bool
    ) {
        let event = MessageSent(
            messageId: id, conversationId: conversationId, senderId: sender, senderName: senderName, recipients: [],
            text: text, sentAt: Date())
        let ticket = handOff?.ticket()
        let row = try await sends.query(
            """
            WITH member AS (
                SELECT c.status = 'open' AS open, me.erased,
                    coalesce((SELECT jsonb_agg(o.user_id ORDER BY o.position) FROM conversation_members o
                        WHERE o.conversation_id = c.id AND o.user_id <> \(sender)), '[]') AS others
                FROM conversations c JOIN conversation_members me ON me.conversation_id = c.id AND me.user_id = \(sender)
                WHERE c.id = \(conversationId)
                FOR SHARE OF c, me
            ), existing AS (
                SELECT id, conversation_id, sender_id, text, sent_at, removed_at FROM messages WHERE id = \(id)
            ), sent AS (
                INSERT INTO messages (id, conversation_id, sender_id, text, sent_at)
                SELECT \(id), \(conversationId), \(sender), \(text), \(event.sentAt) FROM member
                WHERE open AND NOT erased AND NOT EXISTS (SELECT 1 FROM existing)
                RETURNING seq, id, conversation_id, sender_id, text, sent_at
            ), \(Outbox.commonTableExpressions(
                for: event, payload: "jsonb_set(\(JSONText(raw: event.json))::jsonb, '{recipients}', member.others)",
                from: "sent, member", ticket: ticket))
            SELECT (SELECT open FROM member) AS open, (SELECT erased FROM member) AS erased,
                (SELECT count(*) FROM notified) AS notified,
                coalesce(s.id, e.id) AS id, coalesce(s.conversation_id, e.conversation_id) AS conversation_id,
                coalesce(s.sender_id, e.sender_id) AS sender_id, coalesce(s.text, e.text) AS text,
                coalesce(s.sent_at, e.sent_at) AS sent_at, e.removed_at IS NOT NULL AS removed, s.id IS NOT NULL AS new,
                o.*
            FROM (SELECT 1) one LEFT JOIN sent s ON true LEFT JOIN existing e ON true LEFT JOIN outboxed o ON true
            """
        ).first!
        if let ticket, try row.decode("new", as: Bool.self) {
            handOff?.committed(
                ticket, rows: [row], type: MessageSent.type, schemaVersion: MessageSent.schemaVersion)
        }
        // NB: NULL when the sender is no member (or there is no such conversation).
        guard try row.decode("open", as: Bool?.self) != nil else { throw ChatError.notFound }
        guard try !row.decode("erased", as: Bool.self) else { throw ChatError.erased }
        if try row.decode("new", as: Bool.self) { return (try Message(row: row), true) }
        // Not stored and no message with this id before: the conversation is closed.
        guard try row.decode("id", as: UUID?.self) != nil else { throw ChatError.closed }
        let existing = try Message(row: row)
        guard existing.senderId == sender, existing.conversationId == conversationId else { throw ChatError.idTaken }
        return (existing, false)
    }

    /// Moves the caller's read marker up to `messageId` (never back) and, when it moved, tells their other devices how
    /// many messages are still unread there.
    func markRead(conversationId: UUID, userId: UUID, messageId: UUID) async throws {
        try await database.transaction { connection in
            guard try Self.membership(conversationId, userId, on: connection) != nil else { throw ChatError.notFound }
            guard
                let seq: Int64 = try connection.query(
                    "SELECT seq FROM messages WHERE id = \(messageId) AND conversation_id = \(conversationId)"
                ).first?.decode("seq")
            else {
                throw ChatError.invalid(field: "messageId", "No such message in this conversation.")
            }
            // NB: a read where the marker already is (every time a client shows the conversation again) says nothing.
            guard
                let moved = try connection.query(
                    """
                    INSERT INTO read_markers (conversation_id, user_id, last_read_seq) VALUES (\(conversationId), \(userId), \(seq))
                    ON CONFLICT (conversation_id, user_id) DO UPDATE SET last_read_seq = excluded.last_read_seq
                    WHERE read_markers.last_read_seq < excluded.last_read_seq
                    RETURNING (SELECT count(*) FROM messages m WHERE m.conversation_id = \(conversationId)
                        AND m.sender_id <> \(userId)
                        AND m.seq > greatest(\(seq), \(Self.lastWritten(by: userId, in: "\(conversationId)")))) AS unread
                    """
                ).first
            else { return }
            try Outbox.append(
                ConversationRead(
                    conversationId: conversationId, userId: userId,
                    unread: Int(try moved.decode("unread", as: Int64.self)), version: seq),
                on: connection)
        }
    }

    /// The seq of the last message the user wrote in the conversation, as a subquery (NULL before their first): a
    /// conversation is read through it, or through the read marker when that is later. Sending moves no marker.
    private static func lastWritten(by userId: UUID, in conversation: SQL) -> SQL {
        """
        (SELECT o.seq FROM messages o WHERE o.conversation_id = \(conversation) AND o.sender_id = \(userId)
            ORDER BY o.seq DESC LIMIT 1)
        """
    }

    /// Whether the conversation is open, when the user is one of its members; nil for anyone else.
    private static func membership(_ conversationId: UUID, _ userId: UUID, on connection: PostgresConnection) throws
        -> Bool?
    {
        try connection.query(
            """
            SELECT c.status = 'open' AS open
            FROM conversations c JOIN conversation_members me ON me.conversation_id = c.id AND me.user_id = \(userId)
            WHERE c.id = \(conversationId)
            """
        ).first?.decode("open")
    }

    // MARK: Events from other services

    /// `match.opened` opens the match's conversation with its members; a later (closing) version already held wins.
    static func open(_ match: MatchOpened, on connection: PostgresConnection) throws {
        let inserted = try connection.query(
            """
            INSERT INTO conversations (id, campus, flow, subject, status, version)
            VALUES (\(match.matchId), \(match.campus), \(match.flow), \(match.subject), 'open', \(match.version))
            ON CONFLICT (id) DO NOTHING RETURNING id
            """)
        guard !inserted.isEmpty else { return }
        for (position, member) in match.members.enumerated() {
            try addMember(
                match.matchId, member.userId, name: member.name, role: member.role, position: position, on: connection)
        }
        try Outbox.append(
            ConversationOpened(
                conversationId: match.matchId, matchId: match.matchId, memberIds: match.members.map(\.userId),
                version: 1),
            on: connection)
    }

    /// `match.closed` closes it: read-only, and gone from the list, its call ended. One that arrives before its opening
    /// makes the conversation closed at once.
    static func close(_ match: MatchClosed, on connection: PostgresConnection) throws {
        // Its calls end first, so that a call under way leaves its line in the conversation.
        try CallPostgresRepository.endCalls(conversationId: match.matchId, on: connection)
        let closed = try connection.query(
            """
            INSERT INTO conversations (id, campus, flow, subject, status, closed_at, version)
            VALUES (\(match.matchId), '', \(match.flow), '', 'closed', now(), \(match.version))
            ON CONFLICT (id) DO UPDATE SET status = 'closed', closed_at = now(), version = excluded.version
            WHERE conversations.status = 'open' AND conversations.version < excluded.version
            RETURNING id
            """)
        guard !closed.isEmpty else { return }
        for (position, userId) in match.memberIds.enumerated() {
            try addMember(match.matchId, userId, name: "", role: "", position: position, on: connection)
        }
        try Outbox.append(
            ConversationClosed(
                conversationId: match.matchId, matchId: match.matchId, memberIds: match.memberIds, version: 2),
            on: connection)
    }

    private static func addMember(
        _ conversationId: UUID, _ userId: UUID, name: String, role: String, position: Int,
        on connection: PostgresConnection
    ) throws {
        // A match event delayed behind its member's deletion may still name them.
        try connection.query(
            """
            INSERT INTO conversation_members (conversation_id, user_id, name, role, position, erased)
            SELECT \(conversationId), \(userId), CASE WHEN erased THEN \(ErasedPerson.name) ELSE \(name) END, \(role),
                \(position), erased
            FROM (SELECT EXISTS (SELECT 1 FROM users WHERE id = \(userId) AND erased_at IS NOT NULL) AS erased) person
            ON CONFLICT DO NOTHING
            """)
    }

    /// A newer profile's name; one of a person who deleted their account (an event delayed behind the deletion)
    /// changes nothing.
    static func applyUser(_ user: UserSnapshot, version: Int64, on connection: PostgresConnection) throws {
        try connection.query(
            """
            INSERT INTO users (id, name, version) VALUES (\(user.userId), \(user.name), \(version))
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, version = excluded.version
            WHERE users.version < excluded.version AND users.erased_at IS NULL
            """)
    }

    /// `user.deleted` erases the person: their name becomes `ErasedPerson.name` wherever chat keeps it, every
    /// message they sent is emptied and marked removed, and the events in the outbox no longer name them or hold
    /// what they wrote. Their users row stays, flagged, so that they can send nothing more. Applying it again
    /// changes nothing.
    ///
    /// NB: the memberships are rewritten before the messages are read, in this order, which `send` relies on.
    static func erase(_ deleted: UserDeleted, on connection: PostgresConnection) throws {
        let person = deleted.userId
        try connection.query(
            """
            INSERT INTO users (id, name, version, erased_at) VALUES (\(person), \(ErasedPerson.name), \(deleted.version), now())
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, erased_at = coalesce(users.erased_at, excluded.erased_at),
                version = greatest(users.version, excluded.version)
            """)
        try connection.query(
            """
            UPDATE conversation_members SET name = \(ErasedPerson.name), erased = true WHERE user_id = \(person)
            """)
        // Every sender is a member: their conversations lead to their messages by the conversations' index.
        let removals = try connection.query(
            """
            WITH removed AS (
                UPDATE messages SET text = '', removed_at = now()
                WHERE conversation_id IN (SELECT conversation_id FROM conversation_members WHERE user_id = \(person))
                    AND sender_id = \(person) AND removed_at IS NULL
                RETURNING id, conversation_id
            )
            SELECT r.conversation_id, array_to_string(array_agg(r.id ORDER BY r.id), ',') AS message_ids,
                (SELECT coalesce(array_to_string(array_agg(m.user_id), ','), '') FROM conversation_members m
                    WHERE m.conversation_id = r.conversation_id AND m.user_id <> \(person)) AS recipients
            FROM removed r GROUP BY r.conversation_id
            """)
        try CallPostgresRepository.erase(person, on: connection)
        try Outbox.erase(person: person, on: connection)
        // NB: after the outbox's erasure, which these events need not go through: they name neither the person nor
        // what they wrote.
        for row in removals {
            let recipients = try Self.ids(row.decode("recipients"))
            guard !recipients.isEmpty else { continue }
            try Outbox.append(
                MessagesRemoved(
                    conversationId: try row.decode("conversation_id"),
                    messageIds: try Self.ids(row.decode("message_ids")),
                    recipients: recipients),
                on: connection)
        }
    }

    /// The ids of a comma-separated list that `array_to_string` made.
    private static func ids(_ list: String) throws -> [UUID] {
        try list.split(separator: ",").map {
            guard let id = UUID(uuidString: String($0)) else { throw PostgresError.decoding("id \($0)") }
            return id
        }
    }
}

extension Message {
    init(row: PostgresRow) throws {
        id = try row.decode("id")
        conversationId = try row.decode("conversation_id")
        senderId = try row.decode("sender_id")
        text = try row.decode("text")
        sentAt = try row.decode("sent_at")
        removed = try row.decode("removed")
    }
}
