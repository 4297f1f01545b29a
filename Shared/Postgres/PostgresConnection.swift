import CLibPQ
import Foundation

/// One libpq connection. Not thread-safe: the pool or a dedicated thread uses it one call at a time.
/// Every call blocks, so it must never run on the Swift concurrency pool.
public final class PostgresConnection: @unchecked Sendable {
    private(set) var connection: OpaquePointer?
    let url: String
    /// The statements prepared on this connection, by text: each is parsed once and then only executed.
    private var prepared: [String: String] = [:]
    /// Part of every statement's name, so that names stay unique when the cache starts again inside a transaction.
    private var generation = 0
    /// At most this many statements stay prepared; past it the cache starts again (statements built with varying
    /// text would otherwise grow it without end).
    static let preparedLimit = 512
    /// Statements `enqueue` holds back, to go with the next one whose rows are read.
    private var queued: [SQL] = []
    /// Whether `enqueue` may hold statements back: inside `transaction`, whose COMMIT sends what is left.
    var isQueueing = false
    /// Whether the open transaction's body committed it already (`queryCommitting`).
    var hasCommitted = false
    /// The first error of a statement sent from the queue, thrown again by every later statement of the transaction.
    var queuedFailure: PostgresError?

    /// Connects, with UTC times in ISO form so that `timestamptz` text decodes the same everywhere.
    public init(url: String, applicationName: String = "tarrare") throws {
        self.url = url
        connection = try Self.connect(url: url, applicationName: applicationName)
    }

    deinit {
        PQfinish(connection)
    }

    private static func connect(url: String, applicationName: String) throws -> OpaquePointer? {
        let keywords = ["dbname", "application_name", "options", "connect_timeout"]
        let values = [url, applicationName, "-c TimeZone=UTC -c DateStyle=ISO,YMD -c client_encoding=UTF8", "5"]
        let connection = withCStringArray(keywords) { keywordPointers in
            withCStringArray(values) { valuePointers in
                // expand_dbname = 1: the "dbname" value is a full connection URL; later keywords add to it.
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfinish(connection)
            throw PostgresError(sqlState: "08001", message: message)
        }
        // NB: libpq prints NOTICEs ("extension already exists") to standard error by default; they are not errors.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        return connection
    }

    /// Whether the socket is still usable; a broken connection is replaced by the pool.
    public var isHealthy: Bool {
        PQstatus(connection) == CONNECTION_OK && PQtransactionStatus(connection) != PQTRANS_UNKNOWN
    }

    /// Whether a transaction is open or failed on this connection.
    var isInTransaction: Bool {
        let status = PQtransactionStatus(connection)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// Reconnects a broken connection in place.
    func reset() {
        endQueueing()
        PQreset(connection)
        prepared.removeAll()
    }

    /// Whether the server closed the socket: what remains to read is its end.
    private var socketIsAtEnd: Bool {
        let socket = PQsocket(connection)
        guard socket >= 0 else { return true }
        var byte: UInt8 = 0
        return recv(socket, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) == 0
    }

    /// Reads what the server sent while the connection sat idle, without waiting: a server that shut down or
    /// restarted has closed it, and the connection is opened again before a job starts on it. (libpq's socket never
    /// blocks here.)
    func reopenIfClosedWhileIdle() -> Bool {
        guard PQconsumeInput(connection) == 0 || PQstatus(connection) != CONNECTION_OK || socketIsAtEnd else {
            return false
        }
        reset()
        return true
    }

    /// Runs one statement with its parameters and returns its rows; the statements queued before it go in the same
    /// round trip.
    @discardableResult
    public func query(_ sql: SQL) throws -> PostgresRows {
        try Self.checkParameters(of: sql)
        if let queuedFailure { throw queuedFailure }
        guard queued.isEmpty else { return try sendQueued(with: sql) }
        guard Self.isPreparable(sql.text) else {
            let result = withCStringArray(sql.parameters) { parameterPointers in
                PQexecParams(connection, sql.text, Int32(sql.parameters.count), nil, parameterPointers, nil, nil, 0)
            }
            defer { PQclear(result) }
            return try rows(of: result)
        }
        let name = try statementName(of: sql.text)
        let result = withCStringArray(sql.parameters) { parameterPointers in
            PQexecPrepared(connection, name, Int32(sql.parameters.count), parameterPointers, nil, nil, 0)
        }
        defer { PQclear(result) }
        do {
            return try rows(of: result)
        } catch let error as PostgresError where error.sqlState == "0A000" || error.sqlState == "26000" {
            // NB: a table whose columns changed makes a prepared statement that returns them fail ("cached plan must
            // not change result type"); this one fails, and the next use prepares every statement again.
            forgetPreparedStatements()
            throw error
        }
    }

    /// Runs a statement whose rows the caller does not read, without waiting for it: inside a transaction it is
    /// held back and sent, in order, with the next statement that is read or with the COMMIT, in one round trip
    /// (libpq's pipeline mode). Its error, if it fails, is thrown by that next statement (and every one after it)
    /// and rolls the transaction back, so it suits writes whose failure ends the transaction anyway: an outbox row,
    /// a timer. Outside a transaction it runs at once.
    public func enqueue(_ sql: SQL) throws {
        try Self.checkParameters(of: sql)
        if let queuedFailure { throw queuedFailure }
        guard isQueueing else {
            try query(sql)
            return
        }
        queued.append(sql)
    }

    /// Forgets what is queued and what failed in it, at the end of a transaction.
    func endQueueing() {
        isQueueing = false
        hasCommitted = false
        queued.removeAll()
        queuedFailure = nil
    }

    /// NB: libpq sends parameters as C strings, so a U+0000 would silently cut the value short. PostgreSQL text
    /// cannot hold one anyway: refuse it as the server refuses such bytes.
    static func checkParameters(of sql: SQL) throws {
        if sql.parameters.contains(where: { $0?.utf8.contains(0) == true }) {
            throw PostgresError(
                sqlState: "22021", message: "a text parameter contains U+0000, which PostgreSQL cannot store")
        }
    }

    /// One command of a pipeline: preparing a statement, or running one.
    private enum PipelineCommand {
        case prepare(text: String, name: String)
        case run
    }

    /// Runs several statements in one round trip, after what is queued, and returns the rows of each; the first
    /// error of any of them is thrown (the server skips what follows it).
    public func query(all statements: [SQL]) throws -> [PostgresRows] {
        for sql in statements { try Self.checkParameters(of: sql) }
        if let queuedFailure { throw queuedFailure }
        guard !statements.isEmpty else { return [] }
        return Array(try pipeline(statements).suffix(statements.count))
    }

    /// Runs `statements` as one transaction in one round trip: BEGIN, the statements and COMMIT in one pipeline.
    /// The first error of any of them rolls all of them back and is thrown.
    func inOneRoundTrip(_ statements: [SQL]) throws -> [PostgresRows] {
        do {
            let rows = try query(all: ["BEGIN"] + statements + ["COMMIT"])
            return Array(rows.dropFirst().dropLast())
        } catch {
            if isInTransaction { try? execute(script: "ROLLBACK") }
            throw error
        }
    }

    /// Sends the queued statements and then `last` in one pipeline, and returns `last`'s rows.
    private func sendQueued(with last: SQL) throws -> PostgresRows {
        try pipeline([last]).last!
    }

    /// Sends the queued statements and then `statements` in one pipeline, and returns the rows of each; the first
    /// error of any of them is thrown (the server skips what follows it up to the sync).
    func pipeline(_ statements: [SQL]) throws -> [PostgresRows] {
        let statements = queued + statements
        queued.removeAll()
        guard PQenterPipelineMode(connection) == 1 else { throw connectionFailure() }
        do {
            return try runPipeline(statements)
        } catch let error as PostgresError where error.sqlState == "08006" {
            // NB: a pipeline cut short leaves results libpq still expects; the connection starts again.
            reset()
            throw error
        }
    }

    private func runPipeline(_ statements: [SQL]) throws -> [PostgresRows] {
        var commands: [PipelineCommand] = []
        var preparing: [String: String] = [:]
        for sql in statements {
            var name: String? = prepared[sql.text] ?? preparing[sql.text]
            if name == nil && Self.isPreparable(sql.text) && prepared.count + preparing.count < Self.preparedLimit {
                let newName = statementName(number: prepared.count + preparing.count)
                guard PQsendPrepare(connection, newName, sql.text, 0, nil) == 1 else { throw connectionFailure() }
                commands.append(.prepare(text: sql.text, name: newName))
                preparing[sql.text] = newName
                name = newName
            }
            let sent = withCStringArray(sql.parameters) { parameterPointers in
                if let name {
                    PQsendQueryPrepared(connection, name, Int32(sql.parameters.count), parameterPointers, nil, nil, 0)
                } else {
                    PQsendQueryParams(
                        connection, sql.text, Int32(sql.parameters.count), nil, parameterPointers, nil, nil, 0)
                }
            }
            guard sent == 1 else { throw connectionFailure() }
            commands.append(.run)
        }
        guard PQpipelineSync(connection) == 1 else { throw connectionFailure() }
        var rows: [PostgresRows] = []
        var firstError: PostgresError?
        var index = 0
        // NB: each command's results end with a NULL; the sync's result comes last and ends the pipeline.
        while true {
            guard let result = PQgetResult(connection) else {
                index += 1
                guard index <= commands.count, PQstatus(connection) == CONNECTION_OK else { throw connectionFailure() }
                continue
            }
            defer { PQclear(result) }
            let status = PQresultStatus(result)
            if status == PGRES_PIPELINE_SYNC { break }
            guard status != PGRES_PIPELINE_ABORTED, index < commands.count else { continue }
            do {
                let read = try self.rows(of: result)
                switch commands[index] {
                case .prepare(let text, let name): prepared[text] = name
                case .run: rows.append(read)
                }
            } catch let error as PostgresError {
                firstError = firstError ?? error
            }
        }
        PQexitPipelineMode(connection)
        if let firstError {
            if firstError.sqlState == "0A000" || firstError.sqlState == "26000" { forgetPreparedStatements() }
            if isQueueing { queuedFailure = firstError }
            throw firstError
        }
        return rows
    }

    private func connectionFailure() -> PostgresError {
        PostgresError(sqlState: "08006", message: String(cString: PQerrorMessage(connection)))
    }

    /// Whether the server can prepare the statement: a query or a change of rows, not a command such as LISTEN.
    static func isPreparable(_ text: String) -> Bool {
        let keyword = text.drop(while: \.isWhitespace).prefix(while: \.isLetter).uppercased()
        return ["SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "VALUES"].contains(keyword)
    }

    /// The name of `text`'s prepared statement, preparing it on first use. The server infers the parameters'
    /// types, as it does for a statement sent with its parameters.
    private func statementName(of text: String) throws -> String {
        if let name = prepared[text] { return name }
        if prepared.count >= Self.preparedLimit { forgetPreparedStatements() }
        let name = statementName(number: prepared.count)
        let result = PQprepare(connection, name, text, 0, nil)
        defer { PQclear(result) }
        _ = try rows(of: result)
        prepared[text] = name
        return name
    }

    /// The name of the cache's `number`th statement.
    private func statementName(number: Int) -> String {
        "s\(generation)_\(number)"
    }

    /// Starts the cache again; the server forgets the old statements now, or with the connection when a
    /// transaction is open (it may have failed, and then accepts no command).
    private func forgetPreparedStatements() {
        if !isInTransaction { try? execute(script: "DEALLOCATE ALL") }
        prepared.removeAll()
        generation += 1
    }

    /// Runs several statements without parameters (migrations, `SET`), after what is queued.
    public func execute(script: String) throws {
        if let queuedFailure { throw queuedFailure }
        if !queued.isEmpty { _ = try sendQueued(with: "SELECT 1") }
        let result = PQexec(connection, script)
        defer { PQclear(result) }
        _ = try rows(of: result)
    }

    private func rows(of result: OpaquePointer?) throws -> PostgresRows {
        guard let result, PQstatus(connection) == CONNECTION_OK else {
            throw PostgresError(sqlState: "08006", message: String(cString: PQerrorMessage(connection)))
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return PostgresRows(columns: [], values: [], affectedRows: Int(String(cString: PQcmdTuples(result))) ?? 0)
        case PGRES_TUPLES_OK:
            let rowCount = PQntuples(result)
            let columnCount = PQnfields(result)
            let columns = (0..<columnCount).map { String(cString: PQfname(result, $0)) }
            var values: [[String?]] = []
            values.reserveCapacity(Int(rowCount))
            for row in 0..<rowCount {
                values.append(
                    (0..<columnCount).map { column in
                        PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
                    })
            }
            return PostgresRows(columns: columns, values: values, affectedRows: Int(rowCount))
        default:
            func field(_ code: UInt8) -> String? {
                PQresultErrorField(result, Int32(code)).map { String(cString: $0) }
            }
            let message =
                field(UInt8(ascii: "M"))
                ?? String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
            throw PostgresError(
                sqlState: field(UInt8(ascii: "C")), message: message, constraint: field(UInt8(ascii: "n")))
        }
    }
}

/// Calls `body` with a NULL-terminated C array of the strings (NULL for nil), valid for the call only.
private func withCStringArray<R>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { $0.flatMap { strdup($0) } }
    defer { for pointer in pointers { free(pointer) } }
    pointers.append(nil)
    return body(pointers.map { UnsafePointer($0) })
}
