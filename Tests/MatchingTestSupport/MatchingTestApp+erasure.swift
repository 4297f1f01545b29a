import Contracts
import Foundation
import Postgres
import ServiceKit
import TestSupport

/// What erasure tests look for in matching's database: every table of its public schema (the read models, the flows'
/// tables, the outbox and the inbox) read row by row as text.
extension MatchingTestApp {
    /// Registers `caller` in the users read model as accounts' `user.registered` does, with `bio`.
    public func register(_ caller: Identity, bio: String? = nil) async throws {
        try await applyAsConsumer(
            UserRegistered(
                user: UserSnapshot(
                    userId: caller.userId, campus: caller.campus, name: caller.name, mode: "student", bio: bio),
                version: 1))
    }

    /// Each of `texts` that some row of the database holds, case-insensitively, with the tables that hold it; empty
    /// when none is left anywhere.
    public func traces(of texts: [String]) async throws -> [String: [String]] {
        var found: [String: [String]] = [:]
        for table in try await tables() {
            for text in texts {
                let rows = try await service.database.pool.query(
                    "SELECT count(*) AS n FROM \(unescaped: "\"\(table)\"") t WHERE t::text ILIKE \("%\(text)%")")
                if try rows.first!.decode("n", as: Int64.self) > 0 { found[text, default: []].append(table) }
            }
        }
        return found
    }

    /// Every table's rows as text, sorted, by table: what a step changed, compared before and after it. PostGIS's
    /// `spatial_ref_sys`, thousands of rows of reference data that nothing writes, is left out.
    public func snapshot() async throws -> [String: [String]] {
        var snapshot: [String: [String]] = [:]
        for table in try await tables() where table != "spatial_ref_sys" {
            snapshot[table] = try await service.database.pool.query(
                "SELECT t::text AS row FROM \(unescaped: "\"\(table)\"") t ORDER BY 1"
            ).map { try $0.decode("row") }
        }
        return snapshot
    }

    /// The names of the tables of the public schema.
    private func tables() async throws -> [String] {
        try await service.database.pool.query(
            """
            SELECT table_name::text AS name FROM information_schema.tables
            WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1
            """
        ).map { try $0.decode("name") }
    }
}
