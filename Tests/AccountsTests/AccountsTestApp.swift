import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import Messaging
import Postgres
import ServiceKit
import TestSupport

@testable import Accounts

/// The real accounts application on a fresh database and vhost, with a key of its own and cheap bcrypt.
struct AccountsTestApp: ServiceTestApp {
    let service: TestService

    static func make(_ overrides: [String: String] = [:]) async throws -> AccountsTestApp {
        AccountsTestApp(
            service: try await TestService.make(
                "accounts", migrations: ["Services/Accounts/Migrations"], poolSize: 1, signsTokens: true,
                environment: ["BCRYPT_COST": "4", "MAX_BODY_BYTES": "4096", "LOGIN_MAX_FAILURES_PER_ACCOUNT": "3"]
                    .merging(overrides) { $1 }))
    }

    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await service.test(buildApplication, body)
    }

    /// Applies another service's event as the consumer would.
    func handle(_ event: some Event) async throws {
        try await service.database.pool.transaction { connection in
            guard try MediaEventsConsumer.handlers.apply(event, on: connection) else {
                throw TestFailure("accounts has no handler of \(type(of: event).type)")
            }
        }
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
    func post(_ path: String, _ object: [String: Any], token: String? = nil) async throws -> (
        HTTPResponse.Status, [String: Any]
    ) {
        try await call(.post, path, token: token, body: object)
    }

    func get(_ path: String, token: String?) async throws -> (HTTPResponse.Status, [String: Any]) {
        try await call(.get, path, token: token)
    }

    /// Signs a new `@helsinki.fi` user up and returns the session JSON.
    func signUp(
        _ email: String = "student\(UUID().uuidString.prefix(8))@helsinki.fi",
        password: String = "correct horse battery", name: String = "Aino"
    ) async throws -> [String: Any] {
        let (status, session) = try await post("/v1/auth/signup", ["email": email, "password": password, "name": name])
        guard status == .created else { throw TestFailure("signup answered \(status): \(session)") }
        return session
    }
}
