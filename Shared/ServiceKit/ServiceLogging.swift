import Foundation
import Logging

/// Sets up the process's logging once, at start: one JSON object a line (`LOG_FORMAT=json`) or readable text.
public enum ServiceLogging {
    public static func bootstrap(_ configuration: ServiceConfiguration) -> Logger {
        let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
        let service = configuration.service
        let format: ServiceLogHandler.Format = configuration.logFormat == "json" ? .json : .text
        LoggingSystem.bootstrap { label in
            ServiceLogHandler(label: label, service: service, logLevel: level, format: format)
        }
        return Logger(label: service)
    }
}

/// Writes each record as one line on standard error: as JSON (time, level, service, logger, message and metadata), or
/// as readable text (time, level, logger, metadata and message).
///
/// NB: the metadata is put into words only when a record is written. swift-log's `StreamLogHandler` does it again
/// for all of it each time a key is set, and every request sets two (its id, its user) whether or not anything is
/// logged: in chat, 2 % of the CPU a message.
public struct ServiceLogHandler: LogHandler {
    public enum Format: Sendable {
        case json, text
    }

    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    let label: String
    let service: String
    let format: Format

    public init(label: String, service: String, logLevel: Logger.Level, format: Format) {
        self.label = label
        self.service = service
        self.logLevel = logLevel
        self.format = format
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let time = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        let merged = metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 })
        var line: Data
        switch format {
        case .json:
            var record = ["time": time, "level": event.level.rawValue, "service": service, "logger": label]
            record["message"] = event.message.description
            for (key, value) in merged { record[key] = value.description }
            guard let json = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]) else { return }
            line = json
        case .text:
            let words = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            line = Data(
                "\(time) \(event.level) \(label):\(words.isEmpty ? "" : " " + words) [\(event.source)] \(event.message)"
                    .utf8)
        }
        line.append(UInt8(ascii: "\n"))
        FileHandle.standardError.write(line)
    }
}
