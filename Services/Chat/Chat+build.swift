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
        publishes: [
            ConversationOpened.type, ConversationClosed.type, MessageSent.type, ConversationRead.type,
            MessagesRemoved.type, CallRinging.type, CallAnswered.type, CallEnded.type,
        ],
        handlers: MatchEventsConsumer.handlers, otherExchanges: [LiveFrames.exchange], downstream: ["notifications"])
    var builder = try await ServiceBuilder(
        configuration, logger: logger, migrations: [Bundle.module.url(forResource: "Migrations", withExtension: nil)!],
        topology: topology, bundle: .module)
    let verifier = try await builder.accessTokenVerifier()
    ConversationController(
        repository: ConversationPostgresRepository(database: builder.database, handOff: builder.outboxHandOff)
    )
    .addRoutes(to: builder.router, verifier: verifier)
    // Calls: their signals go straight to notifications' live exchange, which passes frames without seq to sockets.
    let reader = EnvironmentReader(values: configuration.environment)
    let calls = CallPostgresRepository(
        database: builder.database, ringTime: try reader.double("CALL_RING_SECONDS", in: 1...300) ?? 30)
    let live = LiveChannel(
        exchange: LiveFrames.exchange, amqpURL: configuration.amqpURL, status: builder.brokerStatus, logger: logger)
    CallController(repository: calls, turn: try TurnSettings(reader), live: live)
        .addRoutes(to: builder.router, verifier: verifier)
    builder.addServices(live, CallClock(repository: calls, logger: logger))
    return try builder.build()
}
