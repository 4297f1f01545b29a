import Contracts
import Foundation
import Messaging
import Postgres
import ServiceKit

/// Matching's read models of places, users and images, kept from their services' events for every flow; an event
/// older than what is held changes nothing.
public enum ReadModels {
    /// What matching handles of places', accounts' and media's events; a block also closes what is open between the
    /// two in each of `flows`.
    public static func handlers(flows: [any MatchingFlow.Type] = [], configuration: ServiceConfiguration? = nil)
        -> EventHandlers
    {
        var handlers = EventHandlers()
        handlers.on(UserBlocked.self, from: "accounts") { event, connection in
            try connection.query(
                """
                INSERT INTO blocks (blocker_id, blocked_id) VALUES (\(event.blockerId), \(event.blockedId))
                ON CONFLICT DO NOTHING
                """)
            if let configuration {
                for flow in flows {
                    try flow.closeBetween(
                        event.blockerId, event.blockedId, configuration: configuration, on: connection)
                }
            }
        }
        handlers.on(UserSuspended.self, from: "accounts") { event, connection in
            try hide(event.userId, closingIn: flows, configuration: configuration, on: connection)
        }
        handlers.on(UserDeleted.self, from: "accounts") { event, connection in
            // Hidden and closed first, so that nothing the flows withdraw next is offered to them again.
            try hide(event.userId, closingIn: flows, configuration: configuration, on: connection)
            if let configuration {
                for flow in flows {
                    try flow.erase(event.userId, configuration: configuration, on: connection)
                }
            }
            try erase(event.userId, campus: event.campus, version: event.version, on: connection)
            // NB: last, so that the events the flows just appended are rewritten too.
            try Outbox.erase(person: event.userId, on: connection)
        }
        handlers.on(UserUnblocked.self, from: "accounts") { event, connection in
            try connection.query(
                "DELETE FROM blocks WHERE blocker_id = \(event.blockerId) AND blocked_id = \(event.blockedId)")
        }
        handlers.on(PlaceUpserted.self, from: "places") { event, connection in
            try applyPlace(event.place, version: event.version, isRetired: false, on: connection)
        }
        handlers.on(PlaceRetired.self, from: "places") { event, connection in
            try connection.query(
                """
                UPDATE places SET is_retired = true, version = \(event.version)
                WHERE id = \(event.placeId) AND version < \(event.version)
                """)
        }
        handlers.on(UserRegistered.self, from: "accounts") { event, connection in
            try applyUser(event.user, version: event.version, on: connection)
        }
        handlers.on(UserUpdated.self, from: "accounts") { event, connection in
            try applyUser(event.user, version: event.version, on: connection)
        }
        handlers.on(MediaStored.self, from: "media") { event, connection in
            try applyImage(event, on: connection)
        }
        handlers.on(MediaDeleted.self, from: "media") { event, connection in
            try applyImageDeleted(event, on: connection)
        }
        return handlers
    }

    /// Hides a student from everyone, as if everyone had blocked them (a suspension, a deleted account), and closes
    /// what they have open with anyone in each of `flows`.
    static func hide(
        _ userId: UUID, closingIn flows: [any MatchingFlow.Type], configuration: ServiceConfiguration?,
        on connection: PostgresConnection
    ) throws {
        try connection.query("INSERT INTO suspended_users (user_id) VALUES (\(userId)) ON CONFLICT DO NOTHING")
        guard let configuration else { return }
        for flow in flows {
            for partner in try flow.partners(of: userId, on: connection) {
                try flow.closeBetween(userId, partner, configuration: configuration, on: connection)
            }
        }
    }

    /// Erases a student who deleted their account from the shared read models: their name becomes
    /// `ErasedPerson.name` (a row kept at the event's version, so that a late `user.registered` or `user.updated`
    /// cannot bring it back), their bio and photo go, their images count as deleted, and their blocks, either way
    /// round, go. The `match.opened` events that name them lose their subject, which may hold what they wrote.
    static func erase(_ userId: UUID, campus: String, version: Int64, on connection: PostgresConnection) throws {
        try connection.query(
            """
            INSERT INTO users (id, campus, name, photo_id, bio, version)
            VALUES (\(userId), \(campus), \(ErasedPerson.name), NULL, NULL, \(version))
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, photo_id = NULL, bio = NULL,
                version = greatest(users.version, excluded.version)
            """)
        try connection.query("UPDATE media SET deleted = true WHERE owner_id = \(userId) AND NOT deleted")
        try connection.query("DELETE FROM blocks WHERE blocker_id = \(userId) OR blocked_id = \(userId)")
        try connection.query(
            """
            UPDATE outbox SET payload = jsonb_set(payload, '{subject}', '""')
            WHERE type = \(MatchOpened.type) AND payload ->> 'subject' <> ''
                AND EXISTS (SELECT 1 FROM jsonb_array_elements(payload -> 'members') AS m
                            WHERE lower(m ->> 'userId') = \(userId)::uuid::text)
            """)
    }

    /// 403 for a student who may no longer act: suspended, or gone with their account (whose access token may still
    /// be valid for a few minutes). What such a request would write would name them again.
    public static func requireActive(_ userId: UUID, on connection: PostgresConnection) throws {
        guard try connection.query("SELECT 1 AS hidden FROM suspended_users WHERE user_id = \(userId)").isEmpty else {
            throw MatchingError.forbidden("Your account is suspended or deleted.")
        }
    }

    public static func applyPlace(
        _ place: PlaceSnapshot, version: Int64, isRetired: Bool, on connection: PostgresConnection
    ) throws {
        try connection.query(
            """
            INSERT INTO places (id, campus, name, kind, latitude, longitude, is_retired, version)
            VALUES (\(place.placeId), \(place.campus), \(place.name), \(place.kind), \(place.latitude), \(place.longitude),
                \(isRetired), \(version))
            ON CONFLICT (id) DO UPDATE SET campus = excluded.campus, name = excluded.name, kind = excluded.kind,
                latitude = excluded.latitude, longitude = excluded.longitude, is_retired = excluded.is_retired,
                version = excluded.version
            WHERE places.version < excluded.version
            """)
    }

    static func applyUser(_ user: UserSnapshot, version: Int64, on connection: PostgresConnection) throws {
        try connection.query(
            """
            INSERT INTO users (id, campus, name, photo_id, bio, version)
            VALUES (\(user.userId), \(user.campus), \(user.name), \(user.photoId), \(user.bio), \(version))
            ON CONFLICT (id) DO UPDATE SET campus = excluded.campus, name = excluded.name, photo_id = excluded.photo_id,
                bio = excluded.bio, version = excluded.version
            WHERE users.version < excluded.version
            """)
    }

    public static func applyImage(_ event: MediaStored, on connection: PostgresConnection) throws {
        try connection.query(
            """
            INSERT INTO media (id, owner_id, campus, deleted, version)
            VALUES (\(event.mediaId), \(event.ownerId), \(event.campus), false, \(event.version))
            ON CONFLICT (id) DO UPDATE SET owner_id = excluded.owner_id, campus = excluded.campus, deleted = false,
                version = excluded.version
            WHERE media.version < excluded.version
            """)
    }

    /// Marks an image deleted; a deletion that overtakes its image leaves a tombstone, so that the late
    /// `media.stored` (version 1) cannot bring the image back.
    public static func applyImageDeleted(_ event: MediaDeleted, on connection: PostgresConnection) throws {
        try connection.query(
            """
            INSERT INTO media (id, owner_id, campus, deleted, version)
            VALUES (\(event.mediaId), \(event.ownerId), NULL, true, \(event.version))
            ON CONFLICT (id) DO UPDATE SET deleted = true, version = excluded.version
            WHERE media.version < excluded.version
            """)
    }

    /// Whether `id` is an image `owner` stored and has not deleted.
    public static func isOwnImage(_ id: UUID, owner: UUID, on connection: PostgresConnection) throws -> Bool {
        try !connection.query(
            "SELECT 1 AS own FROM media WHERE id = \(id) AND owner_id = \(owner) AND NOT deleted"
        ).isEmpty
    }

    /// The SQL condition that no block stands between the users `a` and `b` (SQL of their ids), either way round, and
    /// that neither is suspended (a suspended student is as if everyone had blocked them).
    public static func unblocked(_ a: SQL, _ b: SQL) -> SQL {
        """
        (NOT EXISTS (SELECT 1 FROM blocks
            WHERE (blocks.blocker_id = \(a) AND blocks.blocked_id = \(b)) OR (blocks.blocker_id = \(b) AND blocks.blocked_id = \(a)))
         AND NOT EXISTS (SELECT 1 FROM suspended_users WHERE suspended_users.user_id IN (\(a), \(b))))
        """
    }

    /// Whether a block stands between `a` and `b`, either way round.
    public static func isBlocked(_ a: UUID, _ b: UUID, on connection: PostgresConnection) throws -> Bool {
        try !connection.query("SELECT 1 AS blocked WHERE NOT \(unblocked("\(a)::uuid", "\(b)::uuid"))").isEmpty
    }

    /// The names of those of `ids` that are live places of the campus of the given kind (any kind when nil).
    public static func liveNames(of ids: [UUID], campus: String, kind: String?, on connection: PostgresConnection)
        throws -> [UUID: String]
    {
        let rows = try connection.query(
            """
            SELECT id, name FROM places
            WHERE id = ANY(\(ids.map(\.uuidString))::uuid[]) AND campus = \(campus)
              AND (\(kind)::text IS NULL OR kind = \(kind)) AND NOT is_retired
            """)
        return Dictionary(
            try rows.map { (try $0.decode("id", as: UUID.self), try $0.decode("name", as: String.self)) }
        ) { first, _ in first }
    }

    /// The place `id` among the `liveNames` read, or 404 naming `what`.
    public static func place(_ id: UUID, in names: [UUID: String], what: String) throws(MatchingError)
        -> PlaceReference
    {
        guard let name = names[id] else { throw .notFound(what) }
        return PlaceReference(placeId: id, name: name)
    }

    /// The point of a place choice: the point itself, or a live place of the campus (404 naming `what`).
    public static func location(
        of choice: PlaceChoice, campus: String, what: String, on connection: PostgresConnection
    ) throws -> (point: GeoPoint, placeId: UUID?) {
        switch choice {
        case .point(let point):
            return (point, nil)
        case .place(let placeId):
            guard
                let row = try connection.query(
                    """
                    SELECT latitude, longitude FROM places
                    WHERE id = \(placeId) AND campus = \(campus) AND NOT is_retired
                    """
                ).first
            else { throw MatchingError.notFound(what) }
            return (GeoPoint(lat: try row.decode("latitude"), lon: try row.decode("longitude")), placeId)
        }
    }
}
