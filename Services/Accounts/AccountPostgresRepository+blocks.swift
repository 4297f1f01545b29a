import Contracts
import Foundation
import Messaging
import Postgres
import ServiceKit

extension AccountPostgresRepository {
    /// The students `blockerId` blocked, latest first.
    func blocks(of blockerId: UUID) async throws -> [Block] {
        try await database.query(
            """
            SELECT b.blocked_id, u.name, b.created_at FROM blocks b JOIN users u ON u.id = b.blocked_id
            WHERE b.blocker_id = \(blockerId) ORDER BY b.created_at DESC
            """
        ).map {
            Block(
                userId: try $0.decode("blocked_id"), name: try $0.decode("name"), createdAt: try $0.decode("created_at")
            )
        }
    }

    /// Blocks `userId` for `caller`: a student of the caller's campus, else 404 (an id of another campus tells no more
    /// than an unknown one). Blocking again changes nothing (`isNew` false).
    func block(_ userId: UUID, by caller: Identity) async throws -> (block: Block, isNew: Bool) {
        try await database.transaction { connection in
            try Self.requireActive(caller.userId, on: connection)
            guard
                let name: String = try connection.query(
                    "SELECT name FROM users WHERE id = \(userId) AND campus = \(caller.campus) AND deleted_at IS NULL"
                ).first?.decode("name")
            else { throw AccountError.notFound("user") }
            let inserted = try connection.query(
                """
                INSERT INTO blocks (blocker_id, blocked_id) VALUES (\(caller.userId), \(userId))
                ON CONFLICT DO NOTHING RETURNING created_at
                """
            ).first
            if let inserted {
                try Outbox.append(
                    UserBlocked(blockerId: caller.userId, blockedId: userId, campus: caller.campus), on: connection)
                return (Block(userId: userId, name: name, createdAt: try inserted.decode("created_at")), true)
            }
            let createdAt: Date = try connection.query(
                "SELECT created_at FROM blocks WHERE blocker_id = \(caller.userId) AND blocked_id = \(userId)"
            ).first!.decode("created_at")
            return (Block(userId: userId, name: name, createdAt: createdAt), false)
        }
    }

    /// Lifts the block, if there is one.
    func unblock(_ userId: UUID, by blockerId: UUID) async throws {
        try await database.transaction { connection in
            guard
                try connection.query(
                    "DELETE FROM blocks WHERE blocker_id = \(blockerId) AND blocked_id = \(userId) RETURNING 1 AS gone"
                ).first != nil
            else { return }
            try Outbox.append(UserUnblocked(blockerId: blockerId, blockedId: userId), on: connection)
        }
    }
}
