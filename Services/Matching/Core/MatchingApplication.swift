import Contracts
import Foundation
import Hummingbird
import Logging
import Messaging
import ServiceKit

/// Matching's part of the system: the read models every flow shares, the flows with their tables, events, routes and
/// timers, and the one scheduler that works the timers of all of them.
public func buildMatchingApplication(
    _ configuration: ServiceConfiguration, logger: Logger, flows: [any MatchingFlow.Type]
) async throws -> some ApplicationProtocol {
    let schedulerInterval =
        try EnvironmentReader(values: configuration.environment)
        .double("SCHEDULER_INTERVAL_SECONDS", in: 0.05...60) ?? 0.5
    var builder = try await ServiceBuilder(
        configuration, logger: logger,
        migrations: [MatchingMigrations.directory] + flows.compactMap { $0.migrations },
        topology: Topology(
            service: "matching", publishes: Set(flows.flatMap { $0.publishes }).sorted(),
            handlers: ReadModels.handlers(flows: flows, configuration: configuration),
            otherExchanges: [LiveFrames.exchange]),
        bundle: .module, openAPIParts: flows.compactMap { $0.openAPI })
    let verifier = try await builder.accessTokenVerifier()
    // Live positions go straight to notifications' live exchange, which passes frames without seq to the sockets.
    let live = LiveChannel(
        exchange: LiveFrames.exchange, amqpURL: configuration.amqpURL, status: builder.brokerStatus, logger: logger)
    let context = FlowContext(
        database: builder.database, configuration: configuration, positions: PositionSender(live: live, logger: logger),
        logger: logger)
    var timers = TimerHandlers()
    for flow in flows {
        let made = try flow.init(context)
        made.addRoutes(to: builder.router, verifier: verifier)
        timers = timers.merging(made.timerHandlers)
    }
    builder.addServices(
        live,
        TimerScheduler(
            database: builder.database, handlers: timers, interval: .milliseconds(Int(schedulerInterval * 1000)),
            logger: logger))
    return try builder.build()
}
