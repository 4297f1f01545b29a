import Foundation
import Logging
import Postgres

/// Where the tests' real PostgreSQL and RabbitMQ are, from `TEST_POSTGRES_URL`, `TEST_AMQP_URL` and `RABBITMQCTL`
/// (the test command sets them). Tests refuse any host that is not this machine.
public enum TestEnvironment {
    public static var postgresURL: String {
        localOnly(
            ProcessInfo.processInfo.environment["TEST_POSTGRES_URL"]
                ?? "postgres://tarrare_admin@127.0.0.1:5432/postgres")
    }

    public static var amqpURL: String {
        localOnly(ProcessInfo.processInfo.environment["TEST_AMQP_URL"] ?? "amqp://tarrare_admin@127.0.0.1:5672/%2F")
    }

    /// RabbitMQ's HTTP API, where the tests make and drop their vhosts.
    public static var rabbitmqAPI: String {
        localOnly(ProcessInfo.processInfo.environment["TEST_RABBITMQ_API"] ?? "http://127.0.0.1:15672/api")
    }

    public static var rabbitmqctl: String {
        ProcessInfo.processInfo.environment["RABBITMQCTL"] ?? "rabbitmqctl"
    }

    public static let logger: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel =
            ProcessInfo.processInfo.environment["TEST_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .warning
        return logger
    }()

    private static func localOnly(_ url: String) -> String {
        guard let host = URLComponents(string: url)?.host, ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)
        else {
            fatalError("tests run only against a server on this machine, not \(url)")
        }
        return url
    }

    /// `url` with its database (or vhost) path replaced.
    static func replacingPath(of url: String, with path: String) -> String {
        var components = URLComponents(string: url)!
        components.percentEncodedPath = "/" + path
        return components.string!
    }
}
