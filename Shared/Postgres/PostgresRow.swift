import Foundation

/// The rows a statement returned, as text, decoded on demand.
public struct PostgresRows: Sendable, Sequence {
    public let columns: [String]
    let values: [[String?]]
    /// How many rows an INSERT, UPDATE or DELETE touched.
    public let affectedRows: Int

    public var count: Int { values.count }
    public var isEmpty: Bool { values.isEmpty }
    public var first: PostgresRow? { values.first.map { PostgresRow(columns: columns, values: $0) } }

    public func makeIterator() -> some IteratorProtocol<PostgresRow> {
        values.lazy.map { PostgresRow(columns: columns, values: $0) }.makeIterator()
    }
}

/// One row; columns are read by name.
///
/// NB: its decoding is inlinable, so that a caller's decode is specialized for the type it reads: unspecialized,
/// each column looked up the type's metadata and witnesses at run time.
public struct PostgresRow: Sendable {
    @usableFromInline let columns: [String]
    @usableFromInline let values: [String?]

    /// Decodes a column that must not be NULL.
    @inlinable
    public func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        guard let text = try text(column) else {
            throw PostgresError.decoding("column \(column) is NULL")
        }
        guard let value = T(postgresText: text) else {
            throw PostgresError.decoding("column \(column) is not a \(T.self): \(text.prefix(40))")
        }
        return value
    }

    /// Decodes a column that may be NULL.
    @inlinable
    public func decode<T: PostgresDecodable>(_ column: String, as type: T?.Type = T?.self) throws -> T? {
        guard let text = try text(column) else { return nil }
        guard let value = T(postgresText: text) else {
            throw PostgresError.decoding("column \(column) is not a \(T.self): \(text.prefix(40))")
        }
        return value
    }

    @usableFromInline
    func text(_ column: String) throws -> String? {
        guard let index = columns.firstIndex(of: column) else {
            throw PostgresError.decoding("no column \(column)")
        }
        return values[index]
    }
}

/// A value read from PostgreSQL's text output.
public protocol PostgresDecodable {
    init?(postgresText: String)
}

extension String: PostgresDecodable {
    public init?(postgresText: String) { self = postgresText }
}

extension Int: PostgresDecodable {
    public init?(postgresText: String) { self.init(postgresText) }
}

extension Int32: PostgresDecodable {
    public init?(postgresText: String) { self.init(postgresText) }
}

extension Int64: PostgresDecodable {
    public init?(postgresText: String) { self.init(postgresText) }
}

extension Double: PostgresDecodable {
    public init?(postgresText: String) { self.init(postgresText) }
}

extension Bool: PostgresDecodable {
    public init?(postgresText: String) {
        switch postgresText {
        case "t", "true": self = true
        case "f", "false": self = false
        default: return nil
        }
    }
}

extension UUID: PostgresDecodable {
    public init?(postgresText: String) { self.init(hexText: postgresText) }
}

extension Date: PostgresDecodable {
    public init?(postgresText: String) {
        guard let date = PostgresTimestamp.parse(postgresText) else { return nil }
        self = date
    }
}

extension Data: PostgresDecodable {
    /// bytea in hex form (`\x0a1b`).
    public init?(postgresText: String) {
        let bytes = Array(postgresText.utf8)
        guard bytes.count >= 2, bytes[0] == 92, bytes[1] == 120, bytes.count % 2 == 0 else { return nil }
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 48...57: byte - 48
            case 97...102: byte - 87
            case 65...70: byte - 55
            default: nil
            }
        }
        var data = Data(capacity: (bytes.count - 2) / 2)
        var index = 2
        while index < bytes.count {
            guard let high = nibble(bytes[index]), let low = nibble(bytes[index + 1]) else { return nil }
            data.append(high << 4 | low)
            index += 2
        }
        self = data
    }
}
