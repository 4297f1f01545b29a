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

    /// Each of `texts` that some row of the database holds, case-insensitively, with the rows that hold it; empty
    /// when none is left anywhere.
    public func traces(of texts: [String]) async throws -> [String: [String]] {
        var found: [String: [String]] = [:]
        for text in texts {
            let rows = try await service.database.rowsContaining(text)
            if !rows.isEmpty { found[text] = rows }
        }
        return found
    }

    /// Every table's rows as text, sorted: what a step changed, compared before and after it. PostGIS's
    /// `spatial_ref_sys`, thousands of rows of reference data that nothing writes, is left out.
    public func snapshot() async throws -> [String] {
        try await service.database.rowsContaining("").filter { !$0.hasPrefix("spatial_ref_sys:") }.sorted()
    }
}
