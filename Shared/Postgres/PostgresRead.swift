/// A statement and what its rows mean: what a repository reads, made so that several independent reads of a step
/// can go to the server in one round trip (`PostgresConnection.read`) instead of one each.
public struct PostgresRead<Value>: Sendable {
    public let sql: SQL
    let decode: @Sendable (PostgresRows) throws -> Value

    public init(_ sql: SQL, decode: @escaping @Sendable (PostgresRows) throws -> Value) {
        self.sql = sql
        self.decode = decode
    }

    /// The same statement, its value changed by `transform`.
    public func map<Other>(_ transform: @escaping @Sendable (Value) throws -> Other) -> PostgresRead<Other> {
        PostgresRead<Other>(sql) { [decode] rows in try transform(try decode(rows)) }
    }
}

extension PostgresConnection {
    /// Runs the reads in one round trip, in order, with the statements queued before them, and returns their values
    /// in the same order. The server runs them one after another, so a lock one of them takes holds for the ones
    /// after it; the first statement that fails throws, and so does the first value that does not decode.
    public func read<each Value>(_ reads: repeat PostgresRead<each Value>) throws -> (repeat each Value) {
        var statements: [SQL] = []
        for read in repeat each reads { statements.append(read.sql) }
        var results = try query(all: statements)[...]
        func next<One>(_ read: PostgresRead<One>) throws -> One {
            try read.decode(results.removeFirst())
        }
        return (repeat try next(each reads))
    }
}
