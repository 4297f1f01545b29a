/// A failure reported by libpq or the server, with the server's SQLSTATE when there is one.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// The five-character SQLSTATE (`23505` for a unique violation), or nil for client-side failures.
    public let sqlState: String?
    public let message: String
    /// The constraint the server named, when it named one.
    public let constraint: String?

    public init(sqlState: String?, message: String, constraint: String? = nil) {
        self.sqlState = sqlState
        self.message = message
        self.constraint = constraint
    }

    public var isUniqueViolation: Bool { sqlState == "23505" }
    public var isForeignKeyViolation: Bool { sqlState == "23503" }
    /// Serialization failures and deadlocks: the transaction can be run again.
    public var isRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }
    /// The connection itself broke (class 08, or the server shutting down).
    public var isConnectionFailure: Bool {
        sqlState?.hasPrefix("08") == true || sqlState == "57P01" || sqlState == "57P02" || sqlState == "57P03"
    }

    public var description: String {
        "PostgreSQL error \(sqlState ?? "-----"): \(message)"
    }

    public static func decoding(_ message: String) -> PostgresError {
        PostgresError(sqlState: nil, message: "cannot decode: \(message)")
    }
}
