import MatchingCore

/// Runs `attempt` for each of `contenders` all at once and collects how each one ended, in the order they ended:
/// `won` when it returned, "conflict" for a 409, else the error it threw.
public func race<Contender: Sendable>(
    _ contenders: [Contender], won: String, _ attempt: @escaping @Sendable (Contender) async throws -> Void
) async -> [String] {
    await withTaskGroup(of: String.self) { group in
        for contender in contenders {
            group.addTask {
                do {
                    try await attempt(contender)
                    return won
                } catch let error as MatchingError {
                    return error.problem.status == .conflict ? "conflict" : "\(error)"
                } catch {
                    return "\(error)"
                }
            }
        }
        return await group.reduce(into: []) { $0.append($1) }
    }
}
