import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import Logging
import Messaging
import Postgres
import ServiceKit

/// What a service's application runs on in one test: a fresh database and vhost, a signing key of its own and the
/// configuration that names them.
public struct TestService: Sendable {
    public let database: TestDatabase
    public let broker: TestBroker
    public let privateKey: EdDSA.PrivateKey
    public let configuration: ServiceConfiguration

    /// The folder of `Package.swift`.
    public static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The campuses every test runs with besides the bundled Helsinki: Aalto University at Otaniemi, so that each
    /// service is tried with two (also given to the system that the system tests drive).
    public static let campusesFile = repositoryRoot.appendingPathComponent("Tests/TestSupport/campuses.json").path

    /// A fresh database built by the messaging migrations and `migrations` (folders relative to the repository root)
    /// or `directories`, a fresh vhost and a new key; or, `sharing` another, its database, vhost and key, as a second replica has.
    /// The service is given the key itself when it `signsTokens`, else its public half; `environment` adds to or
    /// overrides the variables every service is given here.
    public static func make(
        _ service: String, migrations: [String] = [], directories: [URL] = [], poolSize: Int = 4,
        signsTokens: Bool = false,
        environment: [String: String] = [:], sharing other: TestService? = nil
    ) async throws -> TestService {
        let database: TestDatabase
        let broker: TestBroker
        if let other {
            (database, broker) = (other.database, other.broker)
        } else {
            database = try await TestDatabase.make(
                migrations: [PostgresMigrator.messagingDirectory]
                    + migrations.map { repositoryRoot.appendingPathComponent($0) } + directories,
                poolSize: poolSize)
            broker = try await TestBroker.make()
        }
        let privateKey = try other?.privateKey ?? EdDSA.PrivateKey()
        let key =
            signsTokens
            ? ["JWT_PRIVATE_KEY": privateKey.pemRepresentation]
            : ["JWT_PUBLIC_KEY": privateKey.publicKey.pemRepresentation]
        let variables = [
            "POSTGRES_URL": database.url, "AMQP_URL": broker.url, "POSTGRES_POOL_SIZE": "2", "LOG_LEVEL": "warning",
            "CAMPUSES_FILE": campusesFile,
        ].merging(key) { $1 }.merging(environment) { $1 }
        return TestService(
            database: database, broker: broker, privateKey: privateKey,
            configuration: try ServiceConfiguration(service: service, defaultPort: 0, environment: variables))
    }

    /// An access token of `userId`, signed with this service's key.
    public func token(_ userId: UUID = UUID(), campus: String = "helsinki.fi", name: String = "Test") async throws
        -> String
    {
        try await accessToken(signedBy: privateKey, userId: userId, campus: campus, name: name)
    }

    /// Runs `body` against the router of the application `build` makes of this configuration, then deletes the vhost.
    public func test<App: ApplicationProtocol>(
        _ build: (ServiceConfiguration, Logger) async throws -> App,
        _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let app = try await build(configuration, TestEnvironment.logger)
        try await app.test(.router, body)
        try? await broker.delete()
    }
}

/// A service's test app, which holds a `TestService` and reads as it: `app.database`, `app.broker`, `app.token(…)`.
@dynamicMemberLookup
public protocol ServiceTestApp {
    var service: TestService { get }
}

extension ServiceTestApp {
    public subscript<Value>(dynamicMember keyPath: KeyPath<TestService, Value>) -> Value {
        service[keyPath: keyPath]
    }

    /// An access token of `userId`, signed with the service's key.
    public func token(_ userId: UUID = UUID(), campus: String = "helsinki.fi", name: String = "Test") async throws
        -> String
    {
        try await service.token(userId, campus: campus, name: name)
    }
}

/// An access token with the claims accounts gives (or other issuer, audience and times), signed with `key`.
public func accessToken(
    signedBy key: EdDSA.PrivateKey, userId: UUID = UUID(), campus: String = "helsinki.fi", name: String = "Test",
    issuer: String = "tarrare-accounts", audience: String = "tarrare", issuedAt: Date = Date(),
    lifetime: TimeInterval = 900
) async throws -> String {
    let keys = JWTKeyCollection()
    await keys.add(eddsa: key)
    return try await keys.sign(
        AccessTokenClaims(
            userId: userId, campus: campus, name: name, issuer: issuer, audience: audience, issuedAt: issuedAt,
            lifetime: lifetime))
}

extension TestClientProtocol {
    /// Sends `body` as JSON (or nothing) with `token` as bearer; returns the status and the JSON object answered.
    public func call(
        _ method: HTTPRequest.Method, _ path: String, token: String? = nil, body: [String: Any]? = nil
    ) async throws -> (HTTPResponse.Status, [String: Any]) {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        var buffer: ByteBuffer?
        if let body {
            headers[.contentType] = "application/json"
            buffer = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: body))
        }
        return try await execute(uri: path, method: method, headers: headers, body: buffer) { response in
            (
                response.status,
                (try? JSONSerialization.jsonObject(with: Data(response.body.readableBytesView))) as? [String: Any]
                    ?? [:]
            )
        }
    }
}
