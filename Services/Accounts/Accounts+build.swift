import Contracts
import Foundation
import Hummingbird
import Logging
import Messaging
import NIOPosix
import ServiceKit

/// Accounts' part of the system: campuses, password hashing off the event loop, tokens, its routes, mail (SMTP when
/// configured, the log otherwise) sent from its outbox, and whose each image is (from media's events).
func buildApplication(_ configuration: ServiceConfiguration, logger: Logger) async throws -> some ApplicationProtocol {
    let settings = try AccountSettings(configuration)
    var builder = try await ServiceBuilder(
        configuration, logger: logger, migrations: [Bundle.module.url(forResource: "Migrations", withExtension: nil)!],
        topology: Topology(
            service: "accounts",
            publishes: [
                UserRegistered.type, UserUpdated.type, UserBlocked.type, UserUnblocked.type, UserSuspended.type,
                UserDeleted.type,
            ],
            handlers: MediaEventsConsumer.handlers),
        bundle: .module)
    let campuses = try CampusDirectory.load(extraFile: configuration.campusesFile)
    let repository = AccountPostgresRepository(database: builder.database)
    try await repository.syncCampuses(campuses.all)

    let hashingThreads = NIOThreadPool(numberOfThreads: 2)
    hashingThreads.start()
    let tokens = try await TokenIssuer(
        privateKeyPEM: settings.privateKeyPEM, issuer: configuration.jwtIssuer, audience: configuration.jwtAudience,
        accessTokenLifetime: settings.accessTokenLifetime, refreshTokenLifetime: settings.refreshTokenLifetime)
    let hasher = try PasswordHasher(cost: settings.bcryptCost, threads: hashingThreads)
    AccountController(repository: repository, campuses: campuses, hasher: hasher, tokens: tokens, settings: settings)
        .addRoutes(to: builder.router)
    EmailController(repository: repository, campuses: campuses, hasher: hasher, settings: settings)
        .addRoutes(to: builder.router)
    let transport: any MailTransport
    if let smtp = settings.smtp {
        // NB: one thread: mail is sent one at a time, and a slow server must not hold the password hashing.
        let mailThread = NIOThreadPool(numberOfThreads: 1)
        mailThread.start()
        transport = SMTPTransport(settings: smtp, threads: mailThread)
    } else {
        transport = LogMailTransport(logger: logger)
    }
    builder.addServices(
        MailRelay(repository: repository, transport: transport, metrics: builder.metrics, logger: logger))
    BlockController(repository: repository, verifier: tokens.verifier).addRoutes(to: builder.router)
    ModerationController(
        repository: repository, verifier: tokens.verifier, reportsPerDay: settings.reportsPerDay
    ).addRoutes(to: builder.router)
    return try builder.build()
}
