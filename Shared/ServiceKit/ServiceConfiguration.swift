import Foundation

/// What every service reads from its environment, with defaults for a local run. In production
/// (`ENVIRONMENT=production`) the connection URLs and the token key have no default and must be set.
public struct ServiceConfiguration: Sendable {
    public var service: String
    public var httpHost: String
    public var httpPort: Int
    public var postgresURL: String
    public var postgresPoolSize: Int
    /// How long start-up waits for an unreachable database before it gives up (0: not at all).
    public var databaseWaitSeconds: Int
    public var amqpURL: String
    /// PEM of the Ed25519 key that verifies access tokens.
    public var jwtPublicKey: String?
    public var jwtIssuer: String
    public var jwtAudience: String
    public var logLevel: String
    public var logFormat: String
    public var maxBodyBytes: Int
    /// Take the client address from `X-Forwarded-For` (only behind the gateway, which sets it).
    public var trustsForwardedFor: Bool
    /// A JSON file of campuses beyond the bundled ones (same shape as `campuses.json`).
    public var campusesFile: String?
    /// All variables, for a service's own settings.
    public let environment: [String: String]

    public init(service: String, defaultPort: Int, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws
    {
        let reader = EnvironmentReader(values: environment)
        let isProduction = environment["ENVIRONMENT"] == "production"
        self.service = service
        self.environment = environment
        httpHost = reader.string("HTTP_HOST") ?? "127.0.0.1"
        httpPort = try reader.integer("HTTP_PORT", in: 1...65535) ?? defaultPort
        postgresURL =
            try reader.string("POSTGRES_URL", required: isProduction)
            ?? "postgres://\(service)@127.0.0.1:5432/\(service)"
        postgresPoolSize = try reader.integer("POSTGRES_POOL_SIZE", in: 1...200) ?? 8
        databaseWaitSeconds = try reader.integer("DATABASE_WAIT_SECONDS", in: 0...86_400) ?? 0
        amqpURL = try reader.string("AMQP_URL", required: isProduction) ?? "amqp://\(service)@127.0.0.1:5672/%2F"
        jwtPublicKey = try reader.fileOrValue("JWT_PUBLIC_KEY")
        if isProduction && jwtPublicKey == nil { throw ConfigurationError.missing("JWT_PUBLIC_KEY") }
        jwtIssuer = reader.string("JWT_ISSUER") ?? "tarrare-accounts"
        jwtAudience = reader.string("JWT_AUDIENCE") ?? "tarrare"
        logLevel = reader.string("LOG_LEVEL") ?? "info"
        logFormat = reader.string("LOG_FORMAT") ?? (isProduction ? "json" : "text")
        maxBodyBytes = try reader.integer("MAX_BODY_BYTES", in: 1...(64 << 20)) ?? 64 << 10
        trustsForwardedFor = try reader.bool("TRUST_FORWARDED_FOR") ?? false
        campusesFile = reader.string("CAMPUSES_FILE")
    }
}

/// A configuration value that is missing or malformed; the message names the variable.
public enum ConfigurationError: Error, CustomStringConvertible {
    case missing(String)
    case invalid(String, String)

    public var description: String {
        switch self {
        case .missing(let name): "\(name) must be set"
        case .invalid(let name, let reason): "\(name) is invalid: \(reason)"
        }
    }
}

/// Reads typed values from environment variables.
public struct EnvironmentReader: Sendable {
    public let values: [String: String]

    public init(values: [String: String]) {
        self.values = values
    }

    public func string(_ name: String) -> String? {
        values[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    public func string(_ name: String, required: Bool) throws -> String? {
        let value = string(name)
        if required && value == nil { throw ConfigurationError.missing(name) }
        return value
    }

    public func integer(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw ConfigurationError.invalid(name, "expected a whole number in \(range), got \(text)")
        }
        return value
    }

    public func double(_ name: String, in range: ClosedRange<Double>) throws -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Double(text), range.contains(value) else {
            throw ConfigurationError.invalid(name, "expected a number in \(range), got \(text)")
        }
        return value
    }

    public func bool(_ name: String) throws -> Bool? {
        guard let text = string(name)?.lowercased() else { return nil }
        switch text {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw ConfigurationError.invalid(name, "expected true or false, got \(text)")
        }
    }

    /// The value of `NAME`, or the contents of the file named by `NAME_FILE` (for secrets mounted as files).
    public func fileOrValue(_ name: String) throws -> String? {
        if let value = string(name) { return value }
        guard let path = string("\(name)_FILE") else { return nil }
        do {
            return try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError.invalid("\(name)_FILE", "cannot read \(path)")
        }
    }
}
