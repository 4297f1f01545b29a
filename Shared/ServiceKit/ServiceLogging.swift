import Foundation
import Logging

/// Sets up the process's logging once, at start: one JSON object a line (`LOG_FORMAT=json`) or readable text.
public enum ServiceLogging {
    public static func bootstrap(_ configuration: ServiceConfiguration) -> Logger {
        let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
        let service = configuration.service
        if configuration.logFormat == "json" {
            LoggingSystem.bootstrap { label in JSONLogHandler(label: label, service: service, logLevel: level) }
        } else {
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        }
        return Logger(label: service)
    }
}

/// Writes each record as one JSON line on standard error: time, level, service, message and metadata.
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    let label: String
    let service: String

    public init(label: String, service: String, logLevel: Logger.Level) {
        self.label = label
        self.service = service
        self.logLevel = logLevel
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var record: [String: String] = [
            "time": Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
            "level": event.level.rawValue,
            "service": service,
            "logger": label,
            "message": event.message.description,
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            record[key] = value.description
        }
        guard var line = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]) else { return }
        line.append(UInt8(ascii: "\n"))
        FileHandle.standardError.write(line)
    }
}
