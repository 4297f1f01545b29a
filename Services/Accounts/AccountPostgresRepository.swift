import Contracts
import Foundation
import Messaging
import Postgres
import ServiceKit

/// Accounts' data in its own PostgreSQL database: with its extensions (`+blocks`), the only file with SQL.
struct AccountPostgresRepository: Sendable {
    let database: PostgresPool

    private static let accountColumns: SQL =
        "id, email, name, campus, mode, bio, photo_id, email_verified_at IS NOT NULL AS verified, version, created_at"

    func syncCampuses(_ campuses: [Campus]) async throws {
        try await database.transaction { connection in
            for campus in campuses {
                try connection.query(
                    """
                    INSERT INTO campuses (domain, name, center_latitude, center_longitude,
                        min_latitude, min_longitude, max_latitude, max_longitude)
                    VALUES (\(campus.domain), \(campus.name), \(campus.center.latitude), \(campus.center.longitude),
                        \(campus.bounds.minLatitude), \(campus.bounds.minLongitude),
                        \(campus.bounds.maxLatitude), \(campus.bounds.maxLongitude))
                    ON CONFLICT (domain) DO UPDATE SET name = excluded.name,
                        center_latitude = excluded.center_latitude, center_longitude = excluded.center_longitude,
                        min_latitude = excluded.min_latitude, min_longitude = excluded.min_longitude,
                        max_latitude = excluded.max_latitude, max_longitude = excluded.max_longitude,
                        updated_at = now()
                    """)
            }
        }
    }

    /// Creates the account and its `user.registered` event, and the verification code with its mail when given; a
    /// taken email is `emailTaken`.
    func createAccount(
        email: String, passwordHash: String, name: String, campus: String, isVerified: Bool,
        verification: (codeHash: Data, expiresAt: Date, mail: OutgoingMail)?
    ) async throws -> Account {
        do {
            return try await database.transaction { connection in
                let row = try connection.query(
                    """
                    INSERT INTO users (id, email, password_hash, name, campus, email_verified_at)
                    VALUES (\(UUID()), \(email), \(passwordHash), \(name), \(campus),
                        CASE WHEN \(isVerified) THEN now() END)
                    RETURNING \(Self.accountColumns)
                    """
                ).first!
                let account = try Account(row: row)
                if let verification {
                    try connection.query(
                        """
                        INSERT INTO email_verifications (user_id, code_hash, expires_at)
                        VALUES (\(account.id), \(verification.codeHash), \(verification.expiresAt))
                        """)
                    try Self.enqueue(verification.mail, on: connection)
                }
                try Outbox.append(UserRegistered(user: account.snapshot, version: account.version), on: connection)
                return account
            }
        } catch let error as PostgresError where error.isUniqueViolation {
            throw AccountError.emailTaken
        }
    }

    func account(id: UUID) async throws -> Account? {
        try await database.query(
            "SELECT \(Self.accountColumns) FROM users WHERE id = \(id) AND deleted_at IS NULL"
        ).first.map(Account.init)
    }

    /// The account and its password hash, for login.
    func credentials(email: String) async throws -> (account: Account, passwordHash: String)? {
        guard
            let row = try await database.query(
                "SELECT \(Self.accountColumns), password_hash FROM users WHERE email = \(email)"
            ).first
        else { return nil }
        return (try Account(row: row), try row.decode("password_hash"))
    }

    /// Changes what is given and publishes `user.updated` when anything changed.
    /// What `PATCH /v1/me` changes; nil leaves a field as it is.
    struct ProfileChange: Sendable {
        var name: String?
        var mode: Mode?
        var bio: String?
        var photoId: UUID?
    }

    func updateProfile(id: UUID, _ change: ProfileChange) async throws -> Account? {
        try await database.transaction { connection in
            if let photoId = change.photoId,
                try connection.query(
                    "SELECT 1 FROM images WHERE id = \(photoId) AND owner_id = \(id) AND NOT is_deleted"
                ).first == nil
            {
                throw AccountError.notYourImage
            }
            guard
                let row = try connection.query(
                    """
                    UPDATE users SET name = coalesce(\(change.name), name), mode = coalesce(\(change.mode?.rawValue), mode),
                        bio = coalesce(\(change.bio), bio), photo_id = coalesce(\(change.photoId), photo_id),
                        version = version + 1, updated_at = now()
                    WHERE id = \(id) AND deleted_at IS NULL AND (name IS DISTINCT FROM coalesce(\(change.name), name)
                        OR mode IS DISTINCT FROM coalesce(\(change.mode?.rawValue), mode)
                        OR bio IS DISTINCT FROM coalesce(\(change.bio), bio)
                        OR photo_id IS DISTINCT FROM coalesce(\(change.photoId), photo_id))
                    RETURNING \(Self.accountColumns)
                    """
                ).first
            else {
                return try connection.query(
                    "SELECT \(Self.accountColumns) FROM users WHERE id = \(id) AND deleted_at IS NULL"
                ).first.map(Account.init)
            }
            let account = try Account(row: row)
            try Outbox.append(UserUpdated(user: account.snapshot, version: account.version), on: connection)
            return account
        }
    }

    /// Confirms the email when `codeHash` is its verification code (see `spendCode`).
    func verifyEmail(email: String, codeHash: Data) async throws -> Account? {
        try await database.transaction { connection in
            guard let userId = try Self.spendCode(.verification, email: email, codeHash: codeHash, on: connection)
            else { return nil }
            return try connection.query(
                """
                UPDATE users SET email_verified_at = now(), updated_at = now() WHERE id = \(userId)
                RETURNING \(Self.accountColumns)
                """
            ).first.map(Account.init)
        }
    }

    // MARK: Throttling

    /// Per key, the events within the last `window` and the seconds until the oldest of them leaves it.
    func recentEvents(keys: [String], window: TimeInterval) async throws -> [String: ThrottleCount] {
        let since = Date().addingTimeInterval(-window)
        let rows = try await database.query(
            """
            SELECT key, count(*) AS events,
                ceil(extract(epoch FROM min(happened_at) - \(since)))::bigint AS seconds_left
            FROM throttle_events WHERE key = ANY(\(keys)::text[]) AND happened_at > \(since) GROUP BY key
            """)
        return Dictionary(
            uniqueKeysWithValues: try rows.map {
                (
                    try $0.decode("key"),
                    ThrottleCount(events: try $0.decode("events"), secondsLeft: try $0.decode("seconds_left"))
                )
            })
    }

    /// Refuses with 429 (`refusal` and the seconds to wait) when `key` has had its fill of events within `throttle`'s
    /// window; else counts one more, unless `recording` is false (the caller counts only failures).
    func enforce(_ throttle: Throttle, key: String, refusal: String, recording: Bool = true) async throws {
        if let seconds = throttle.retryAfter(try await recentEvents(keys: [key], window: throttle.window)[key]) {
            throw AccountError.throttled(refusal, retryAfterSeconds: seconds)
        }
        if recording { try await recordEvent(keys: [key], window: throttle.window) }
    }

    /// Records an event for each key, and forgets what is older than `window` for them.
    func recordEvent(keys: [String], window: TimeInterval) async throws {
        let since = Date().addingTimeInterval(-window)
        try await database.transaction { connection in
            try connection.query(
                "DELETE FROM throttle_events WHERE key = ANY(\(keys)::text[]) AND happened_at <= \(since)")
            try connection.query("INSERT INTO throttle_events (key) SELECT unnest(\(keys)::text[])")
        }
    }

    func clearEvents(key: String) async throws {
        try await database.query("DELETE FROM throttle_events WHERE key = \(key)")
    }

    // MARK: Refresh tokens

    func storeRefreshToken(userId: UUID, familyId: UUID, hash: Data, expiresAt: Date) async throws {
        try await database.query(
            """
            INSERT INTO refresh_tokens (id, user_id, family_id, token_hash, expires_at)
            VALUES (\(UUID()), \(userId), \(familyId), \(hash), \(expiresAt))
            """)
    }

    enum Rotation: Sendable {
        case rotated(Account)
        /// A spent token came back: its whole family is now revoked.
        case reused
        case invalid
    }

    /// Spends the token of `oldHash` and stores `newHash` in its family, or revokes the family on reuse.
    func rotateRefreshToken(oldHash: Data, newHash: Data, expiresAt: Date) async throws -> Rotation {
        try await database.transaction { connection in
            guard
                let token = try connection.query(
                    """
                    SELECT user_id, family_id, used_at IS NOT NULL AS used, revoked_at IS NOT NULL AS revoked,
                        expires_at <= now() AS expired
                    FROM refresh_tokens WHERE token_hash = \(oldHash) FOR UPDATE
                    """
                ).first
            else { return .invalid }
            let familyId = try token.decode("family_id", as: UUID.self)
            let userId = try token.decode("user_id", as: UUID.self)
            if try token.decode("revoked", as: Bool.self) || token.decode("expired", as: Bool.self) {
                return .invalid
            }
            if try token.decode("used", as: Bool.self) {
                try connection.query(
                    "UPDATE refresh_tokens SET revoked_at = now() WHERE family_id = \(familyId) AND revoked_at IS NULL")
                return .reused
            }
            try connection.query("UPDATE refresh_tokens SET used_at = now() WHERE token_hash = \(oldHash)")
            try connection.query(
                """
                INSERT INTO refresh_tokens (id, user_id, family_id, token_hash, expires_at)
                VALUES (\(UUID()), \(userId), \(familyId), \(newHash), \(expiresAt))
                """)
            guard let row = try connection.query("SELECT \(Self.accountColumns) FROM users WHERE id = \(userId)").first
            else { return .invalid }
            return .rotated(try Account(row: row))
        }
    }

    /// Revokes the session (token family) that `hash` belongs to.
    func revokeFamily(ofTokenHash hash: Data) async throws {
        try await database.query(
            """
            UPDATE refresh_tokens SET revoked_at = now()
            WHERE revoked_at IS NULL AND family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = \(hash))
            """)
    }
}

extension Account {
    /// What the events tell other services.
    var snapshot: UserSnapshot {
        UserSnapshot(userId: id, campus: campus, name: name, mode: mode.rawValue, bio: bio, photoId: photoId)
    }

    init(row: PostgresRow) throws {
        id = try row.decode("id")
        email = try row.decode("email")
        name = try row.decode("name")
        campus = try row.decode("campus")
        guard let mode = Mode(rawValue: try row.decode("mode")) else { throw PostgresError.decoding("mode") }
        self.mode = mode
        bio = try row.decode("bio")
        photoId = try row.decode("photo_id")
        isEmailVerified = try row.decode("verified")
        version = try row.decode("version")
        createdAt = try row.decode("created_at")
    }
}

// MARK: Images, from media's events

extension AccountPostgresRepository {
    /// Keeps what an event says of an image unless a later event said more.
    static func applyImage(
        _ id: UUID, owner: UUID, isDeleted: Bool, version: Int64, on connection: PostgresConnection
    ) throws {
        try connection.query(
            """
            INSERT INTO images (id, owner_id, is_deleted, version) VALUES (\(id), \(owner), \(isDeleted), \(version))
            ON CONFLICT (id) DO UPDATE SET is_deleted = excluded.is_deleted, version = excluded.version
            WHERE images.version < excluded.version
            """)
    }

    /// Takes the image away from its owner's profile when it is their photo, and publishes `user.updated`.
    static func removePhoto(_ imageId: UUID, of ownerId: UUID, on connection: PostgresConnection) throws {
        guard
            let row = try connection.query(
                """
                UPDATE users SET photo_id = NULL, version = version + 1, updated_at = now()
                WHERE id = \(ownerId) AND photo_id = \(imageId)
                RETURNING \(accountColumns)
                """
            ).first
        else { return }
        let account = try Account(row: row)
        try Outbox.append(UserUpdated(user: account.snapshot, version: account.version), on: connection)
    }
}
