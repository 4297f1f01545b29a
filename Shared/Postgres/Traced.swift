import Tracing

/// Runs `body` in a client span named `name`, when the task already is in a trace (a request's, an event's): the
/// database's part of what a traced operation spent. Outside one it starts no trace of its own.
func traced<T>(_ name: String, _ body: () async throws -> T) async throws -> T {
    guard InstrumentationContext.current != nil else { return try await body() }
    return try await withSpan(name, ofKind: .client) { span in
        span.attributes["db.system.name"] = "postgresql"
        return try await body()
    }
}
