import Contracts
import Foundation
import Hummingbird
import Logging
import Messaging
import ServiceKit

/// Chat's part of the system: what it publishes, what it handles, its routes.
func buildApplication(_ configuration: ServiceConfiguration, logger: Logger) async throws -> some ApplicationProtocol {
    let topology = Topology(
        service: "chat",
        publishes: [ConversationOpened.type, ConversationClosed.type, MessageSent.type, ConversationRead.type],
        handlers: MatchEventsConsumer.handlers, downstream: ["notifications"])
    let builder = try await ServiceBuilder(
        configuration, logger: logger, migrations: [Bundle.module.url(forResource: "Migrations", withExtension: nil)!],
        topology: topology, bundle: .module)
    ConversationController(repository: ConversationPostgresRepository(database: builder.database))
        .addRoutes(to: builder.router, verifier: try await builder.accessTokenVerifier())
    return try builder.build()
}
