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
            LoggingSystem.bootstrap { label in TextLogHandler(label: label, logLevel: level) }
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

/// Writes each record as one line of readable text on standard error: time, level, label, metadata and message.
///
/// NB: the metadata is put into words only when a record is written. swift-log's `StreamLogHandler` does it again
/// for all of it each time a key is set, and every request sets two (its id, its user) whether or not anything is
/// logged: in chat, 2 % of the CPU a message.
public struct TextLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    let label: String

    public init(label: String, logLevel: Logger.Level) {
        self.label = label
        self.logLevel = logLevel
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 })
        let words = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let time = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        let line =
            "\(time) \(event.level) \(label):\(words.isEmpty ? "" : " " + words) [\(event.source)] \(event.message)\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}
