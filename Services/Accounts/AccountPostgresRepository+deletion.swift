import Contracts
import Foundation
import Messaging
import Postgres
import ServiceKit

extension AccountPostgresRepository {
    /// The email and password hash of a student who has not deleted their account, to check the password again
    /// before a deletion.
    func credentials(id: UUID) async throws -> (email: String, passwordHash: String)? {
        guard
            let row = try await database.query(
                "SELECT email, password_hash FROM users WHERE id = \(id) AND deleted_at IS NULL"
            ).first
        else { return nil }
        return (try row.decode("email"), try row.decode("password_hash"))
    }

    /// Deletes the student's account in one transaction: their sessions end; the row keeps only its id and campus
    /// (reports and others' blocks refer to it) and its email is free for a new sign-up; what accounts holds of them
    /// (verification and reset codes, mail to them, throttle records keyed by their email, their blocks, their images, and their name and
    /// bio in the outbox's payloads) is erased; and `user.deleted`, which names no one, tells every other service
    /// to erase theirs. False when the account was already deleted.
    func deleteAccount(_ userId: UUID) async throws -> Bool {
        try await database.transaction { connection in
            guard
                let row = try connection.query(
                    "SELECT email, campus FROM users WHERE id = \(userId) AND deleted_at IS NULL FOR UPDATE"
                ).first
            else { return false }
            let email: String = try row.decode("email")
            let campus: String = try row.decode("campus")
            try connection.query("DELETE FROM refresh_tokens WHERE user_id = \(userId)")
            try connection.query("DELETE FROM email_verifications WHERE user_id = \(userId)")
            try connection.query("DELETE FROM password_resets WHERE user_id = \(userId)")
            try connection.query("DELETE FROM mail_outbox WHERE recipient = \(email)")
            let emailKey = AccountRules.throttleKey(email: email)
            try connection.query(
                "DELETE FROM throttle_events WHERE key = ANY(\([emailKey, "resend:" + emailKey, "reset:" + emailKey])::text[])"
            )
            try connection.query("DELETE FROM blocks WHERE blocker_id = \(userId) OR blocked_id = \(userId)")
            try connection.query("DELETE FROM images WHERE owner_id = \(userId)")
            try connection.query(
                """
                UPDATE users SET email = \("deleted-" + userId.uuidString.lowercased() + "@erased.invalid"),
                    password_hash = '', name = \(ErasedPerson.name), bio = '', photo_id = NULL, is_moderator = false,
                    deleted_at = now(), version = version + 1, updated_at = now()
                WHERE id = \(userId)
                """)
            try Outbox.erase(person: userId, on: connection)
            try Outbox.append(UserDeleted(userId: userId, campus: campus), on: connection)
            return true
        }
    }

    /// Refuses a caller whose account was deleted or suspended since their access token was issued (it stays valid
    /// until it expires): what they do no longer counts. `locking` holds their row until the transaction ends.
    static func requireActive(_ userId: UUID, on connection: PostgresConnection, locking: Bool = false) throws {
        let lock: SQL = locking ? "FOR NO KEY UPDATE" : ""
        guard
            try !connection.query(
                "SELECT 1 AS active FROM users WHERE id = \(userId) AND deleted_at IS NULL AND suspended_at IS NULL \(lock)"
            ).isEmpty
        else { throw AccountError.inactive }
    }
}
