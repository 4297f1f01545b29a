import Contracts
import Delivery
import Exchange
import Foundation
import Hummingbird
import Logging
import MatchingCore
import Messaging
import Rides
import ServiceKit
import Tutoring

/// Matching's part of the system: the read models every flow shares, the flows (delivery, tutoring, exchange, rides)
/// with their routes and timers, and the one scheduler that works the timers of all of them.
func buildApplication(_ configuration: ServiceConfiguration, logger: Logger) async throws -> some ApplicationProtocol {
    let schedulerInterval = try EnvironmentReader(values: configuration.environment)
        .double("SCHEDULER_INTERVAL_SECONDS", in: 0.05...60) ?? 0.5
    let publishes = Set(
        DeliveryFlow.publishes + TutoringFlow.publishes + ExchangeFlow.publishes + RidesFlow.publishes
    ).sorted()
    var builder = try await ServiceBuilder(
        configuration, logger: logger,
        migrations: [
            MatchingMigrations.directory, TutoringFlow.migrations, ExchangeFlow.migrations, RidesFlow.migrations,
        ],
        topology: Topology(
            service: "matching", publishes: publishes, handlers: ReadModels.handlers,
            otherExchanges: [LiveFrames.exchange]),
        bundle: .module)
    let verifier = try await builder.accessTokenVerifier()
    // Live positions go straight to notifications' live exchange, which passes frames without seq to the sockets.
    let live = LiveChannel(
        exchange: LiveFrames.exchange, amqpURL: configuration.amqpURL, status: builder.brokerStatus, logger: logger)
    let positions = PositionSender(live: live, logger: logger)
    let delivery = try DeliveryFlow(database: builder.database, configuration: configuration, positions: positions)
    delivery.addRoutes(to: builder.router, verifier: verifier)
    TutoringFlow(database: builder.database).addRoutes(to: builder.router, verifier: verifier)
    ExchangeFlow(database: builder.database).addRoutes(to: builder.router, verifier: verifier)
    let rides = try RidesFlow(database: builder.database, configuration: configuration, positions: positions)
    rides.addRoutes(to: builder.router, verifier: verifier)
    builder.addServices(
        live,
        TimerScheduler(
            database: builder.database, handlers: delivery.timerHandlers.merging(rides.timerHandlers),
            interval: .milliseconds(Int(schedulerInterval * 1000)), logger: logger))
    return try builder.build()
}
