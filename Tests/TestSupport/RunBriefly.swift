import ServiceLifecycle

/// Runs the services while `body` waits for what they should do, then shuts them down.
public func runBriefly(_ services: [any Service], while body: () async throws -> Void) async throws {
    let group = ServiceGroup(services: services, logger: TestEnvironment.logger)
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        do {
            try await body()
        } catch {
            await group.triggerGracefulShutdown()
            throw error
        }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
    }
}
