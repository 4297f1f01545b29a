@testable import Accounts
import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import Messaging
import Postgres
import ServiceKit
import TestSupport

/// The real accounts application on a fresh database and vhost, with a key of its own and cheap bcrypt.
struct AccountsTestApp {
    let database: TestDatabase
    let broker: TestBroker
    let privateKey: EdDSA.PrivateKey
    let configuration: ServiceConfiguration

    static func make(_ overrides: [String: String] = [:]) async throws -> AccountsTestApp {
        let database = try await TestDatabase.make(
            migrations: [
                PostgresMigrator.messagingDirectory,
                URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                    .deletingLastPathComponent().appendingPathComponent("Services/Accounts/Migrations"),
            ], poolSize: 1)
        let broker = try await TestBroker.make()
        let privateKey = try EdDSA.PrivateKey()
        let environment = [
            "POSTGRES_URL": database.url, "AMQP_URL": broker.url, "POSTGRES_POOL_SIZE": "2",
            "JWT_PRIVATE_KEY": privateKey.pemRepresentation, "BCRYPT_COST": "4", "MAX_BODY_BYTES": "4096",
            "LOGIN_MAX_FAILURES_PER_ACCOUNT": "3", "LOG_LEVEL": "warning",
        ].merging(overrides) { $1 }
        return AccountsTestApp(
            database: database, broker: broker, privateKey: privateKey,
            configuration: try ServiceConfiguration(service: "accounts", defaultPort: 0, environment: environment))
    }

    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let app = try await buildApplication(configuration, logger: TestEnvironment.logger)
        try await app.test(.router, body)
        try? await broker.delete()
    }
}

/// JSON helpers for requests and responses.
enum JSON {
    static func body(_ object: [String: Any]) -> ByteBuffer {
        ByteBuffer(bytes: try! JSONSerialization.data(withJSONObject: object))
    }

    static func object(_ buffer: ByteBuffer) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))) as? [String: Any] ?? [:]
    }
}

extension TestClientProtocol {
    /// POSTs a JSON object and returns the status and the decoded JSON answer.
    func post(_ path: String, _ object: [String: Any], token: String? = nil) async throws -> (HTTPResponse.Status, [String: Any]) {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await execute(uri: path, method: .post, headers: headers, body: JSON.body(object)) {
            ($0.status, JSON.object($0.body))
        }
    }

    func get(_ path: String, token: String?) async throws -> (HTTPResponse.Status, [String: Any]) {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await execute(uri: path, method: .get, headers: headers) { ($0.status, JSON.object($0.body)) }
    }

    /// Signs a new `@helsinki.fi` user up and returns the session JSON.
    func signUp(_ email: String = "student\(UUID().uuidString.prefix(8))@helsinki.fi", password: String = "correct horse battery", name: String = "Aino") async throws -> [String: Any] {
        let (status, session) = try await post("/v1/auth/signup", ["email": email, "password": password, "name": name])
        guard status == .created else { throw TestFailure("signup answered \(status): \(session)") }
        return session
    }
}
