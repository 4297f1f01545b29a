import Foundation
import Postgres

/// The mail outbox, codes sent again, and password resets.
extension AccountPostgresRepository {
    /// Puts a mail in the outbox, in the transaction of what it tells.
    static func enqueue(_ mail: OutgoingMail, on connection: PostgresConnection) throws {
        try connection.query(
            "INSERT INTO mail_outbox (recipient, subject, body) VALUES (\(mail.to), \(mail.subject), \(mail.body))")
    }

    /// A mail taken from the outbox to send, with its id and how often it was tried before.
    struct DueMail: Sendable {
        var id: Int64
        var messageId: UUID
        var mail: OutgoingMail
        var attempts: Int
        var createdAt: Date
    }

    /// Takes up to `limit` due mails for `lease` seconds: no other replica takes them meanwhile, and one whose sender
    /// died is taken again when the lease ends.
    func takeDueMail(limit: Int, lease: TimeInterval) async throws -> [DueMail] {
        try await database.query(
            """
            UPDATE mail_outbox SET next_attempt_at = now() + make_interval(secs => \(lease)), attempts = attempts + 1
            WHERE id IN (
                SELECT id FROM mail_outbox
                WHERE sent_at IS NULL AND given_up_at IS NULL AND next_attempt_at <= now()
                ORDER BY next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING id, message_id, recipient, subject, body, attempts - 1 AS attempts, created_at
            """
        ).map {
            DueMail(
                id: try $0.decode("id"), messageId: try $0.decode("message_id"),
                mail: OutgoingMail(
                    to: try $0.decode("recipient"), subject: try $0.decode("subject"),
                    body: try $0.decode("body")),
                attempts: try $0.decode("attempts"), createdAt: try $0.decode("created_at"))
        }
    }

    func markMailSent(_ id: Int64) async throws {
        try await database.query("UPDATE mail_outbox SET sent_at = now(), last_error = NULL WHERE id = \(id)")
    }

    /// Tries the mail again in `seconds`, or never when `givingUp`.
    func markMailFailed(_ id: Int64, error: String, retryIn seconds: TimeInterval, givingUp: Bool) async throws {
        try await database.query(
            """
            UPDATE mail_outbox SET last_error = \(error), next_attempt_at = now() + make_interval(secs => \(seconds)),
                given_up_at = CASE WHEN \(givingUp) THEN now() END
            WHERE id = \(id)
            """)
    }

    /// Forgets mail sent or given up on more than `age` seconds ago: it holds addresses and codes.
    func pruneMail(olderThan age: TimeInterval) async throws {
        let before = Date().addingTimeInterval(-age)
        try await database.query(
            "DELETE FROM mail_outbox WHERE coalesce(sent_at, given_up_at) < \(before)")
    }

    /// What an emailed code proves, and the table that keeps the one code of each account.
    enum EmailCode {
        case verification
        case passwordReset

        var table: SQL {
            switch self {
            case .verification: "email_verifications"
            case .passwordReset: "password_resets"
            }
        }
    }

    /// A new code of `kind` for the account of `email`, replacing its earlier one, mailed by `mail` (given the
    /// account's name and campus) in the same transaction; false when there is no such account, or for verification
    /// when its address is proved already (the caller answers the same either way).
    func issueCode(
        _ kind: EmailCode, email: String, codeHash: Data, expiresAt: Date,
        mail: @escaping @Sendable (_ name: String, _ campus: String) -> OutgoingMail
    ) async throws -> Bool {
        try await database.transaction { connection in
            guard
                let row = try connection.query(
                    """
                    SELECT id, name, campus FROM users
                    WHERE email = \(email) AND deleted_at IS NULL
                        AND (email_verified_at IS NULL OR \(kind == .passwordReset)) FOR UPDATE
                    """
                ).first
            else { return false }
            let userId: UUID = try row.decode("id")
            try connection.query(
                """
                INSERT INTO \(kind.table) (user_id, code_hash, expires_at) VALUES (\(userId), \(codeHash), \(expiresAt))
                ON CONFLICT (user_id) DO UPDATE SET code_hash = excluded.code_hash, expires_at = excluded.expires_at,
                    failed_attempts = 0
                """)
            try Self.enqueue(mail(try row.decode("name"), try row.decode("campus")), on: connection)
            return true
        }
    }

    /// The account's id when `codeHash` is its unexpired code of `kind` with fewer than five wrong tries before it,
    /// the code then spent; nil otherwise, a wrong try counted.
    static func spendCode(_ kind: EmailCode, email: String, codeHash: Data, on connection: PostgresConnection) throws
        -> UUID?
    {
        guard
            let pending = try connection.query(
                """
                SELECT c.user_id, c.code_hash, c.expires_at > now() AS fresh, c.failed_attempts
                FROM \(kind.table) c JOIN users u ON u.id = c.user_id
                WHERE u.email = \(email) AND u.deleted_at IS NULL FOR UPDATE OF c
                """
            ).first
        else { return nil }
        let userId: UUID = try pending.decode("user_id")
        guard try pending.decode("code_hash", as: Data.self) == codeHash, try pending.decode("fresh", as: Bool.self),
            try pending.decode("failed_attempts", as: Int.self) < 5
        else {
            try connection.query(
                "UPDATE \(kind.table) SET failed_attempts = failed_attempts + 1 WHERE user_id = \(userId)")
            return nil
        }
        try connection.query("DELETE FROM \(kind.table) WHERE user_id = \(userId)")
        return userId
    }

    /// Sets the password when `codeHash` is the account's reset code, and ends every session of the account; the
    /// code proved the address too. False when nothing changed.
    func finishPasswordReset(email: String, codeHash: Data, passwordHash: String) async throws -> Bool {
        try await database.transaction { connection in
            guard let userId = try Self.spendCode(.passwordReset, email: email, codeHash: codeHash, on: connection)
            else { return false }
            try connection.query("DELETE FROM email_verifications WHERE user_id = \(userId)")
            try connection.query(
                """
                UPDATE users SET password_hash = \(passwordHash),
                    email_verified_at = coalesce(email_verified_at, now()), updated_at = now()
                WHERE id = \(userId)
                """)
            try connection.query(
                "UPDATE refresh_tokens SET revoked_at = now() WHERE user_id = \(userId) AND revoked_at IS NULL")
            return true
        }
    }
}
