import Foundation
import Postgres

extension TestDatabase {
    /// Every row of every table of the database (outbox and inbox included) whose text holds `trace`, in any case,
    /// as `table: row`: what an erasure must leave empty.
    public func rowsContaining(_ trace: String) async throws -> [String] {
        let tables = try await pool.query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
        ).map { try $0.decode("table_name", as: String.self) }
        var found: [String] = []
        for table in tables {
            let rows = try await pool.query(
                "SELECT t::text AS row FROM \(unescaped: "\"\(table)\"") t WHERE strpos(lower(t::text), lower(\(trace))) > 0"
            )
            found += try rows.map { "\(table): \(try $0.decode("row", as: String.self))" }
        }
        return found
    }
}
