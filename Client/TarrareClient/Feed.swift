import Foundation
import HTTPTypes
import Logging
import WSClient

/// One entry of the student's feed: something that concerns them (an offer, a match, a message, a call), numbered by
/// `seq`, one more than the last, for good.
public struct FeedEntry: Sendable, Equatable {
    public var seq: Int64
    public var type: String
    public var at: Date?
    /// The entry's `data` as JSON; `decode(_:)` reads it as a type of the caller's.
    public var data: Data

    /// `data` read as `T` (dates in ISO 8601).
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try Feed.decoder.decode(T.self, from: data)
    }
}

/// What the feed yields: its entries in order, each once; live frames outside the feed (typing, a driver's position,
/// a call's signal), which are not kept and have no seq; and where the feed is.
public enum FeedEvent: Sendable, Equatable {
    case entry(FeedEntry)
    /// A frame that is not an entry: its type and its `data` as JSON.
    case frame(type: String, data: Data)
    case state(FeedState)
}

public enum FeedState: Sendable, Equatable {
    /// Connected and receiving what was kept after `after`, the last seq seen.
    case catchingUp(after: Int64)
    /// Everything kept has come; what follows is live.
    case live
    /// The connection is gone (the phone changed network, the service restarted): it comes back by itself.
    case reconnecting(after: Int64)
}

/// The student's feed over a WebSocket, as an `AsyncSequence`: it reconnects after a drop from the last seq it
/// yielded, so that an entry is never missed nor yielded twice, and says when it is catching up and when live.
/// Ends when the task iterating it is cancelled, or with `TarrareError.signedOut` when the session ends.
public struct Feed: AsyncSequence, Sendable {
    public typealias Element = FeedEvent

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = Feed.date(text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: text))
            }
            return date
        }
        return decoder
    }()

    /// An ISO 8601 time, with or without fractions of a second.
    static func date(_ text: String) -> Date? {
        (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
    }

    let streamURL: String
    let session: Session
    let after: Int64
    let retry: RetryPolicy
    let logger: Logger

    public func makeAsyncIterator() -> AsyncThrowingStream<FeedEvent, any Error>.Iterator {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: FeedEvent.self)
        let task = Task { await run(continuation) }
        continuation.onTermination = { _ in task.cancel() }
        return stream.makeAsyncIterator()
    }

    /// Where the feed is: touched by one connection at a time.
    private final class Cursor: @unchecked Sendable {
        var last: Int64
        var failures = 0
        init(last: Int64) { self.last = last }
    }

    private func run(_ continuation: AsyncThrowingStream<FeedEvent, any Error>.Continuation) async {
        let cursor = Cursor(last: after)
        while !Task.isCancelled {
            do {
                guard let token = try await session.accessToken() else { throw TarrareError.signedOut }
                var configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 20)
                configuration.additionalHeaders[.authorization] = "Bearer \(token)"
                try await WebSocketClient.connect(
                    url: "\(streamURL)?after=\(cursor.last)", configuration: configuration, logger: logger
                ) { inbound, _, _ in
                    cursor.failures = 0
                    continuation.yield(.state(.catchingUp(after: cursor.last)))
                    for try await message in inbound.messages(maxSize: 1 << 20) {
                        guard case .text(let text) = message, let frame = Frame(text) else { continue }
                        switch frame {
                        case .entry(let entry) where entry.seq <= cursor.last:
                            continue  // NB: sent again after a reconnect: already yielded.
                        case .entry(let entry) where entry.seq > cursor.last + 1:
                            // Never expected: the server fills gaps. Start again from the last one seen.
                            throw TarrareError.feedGap(after: cursor.last, got: entry.seq)
                        case .entry(let entry):
                            cursor.last = entry.seq
                            continuation.yield(.entry(entry))
                        case .live:
                            continuation.yield(.state(.live))
                        case .other(let type, let data):
                            continuation.yield(.frame(type: type, data: data))
                        }
                    }
                }
            } catch TarrareError.signedOut {
                continuation.finish(throwing: TarrareError.signedOut)
                return
            } catch {
                if Task.isCancelled { break }
                logger.debug("feed: connection lost", metadata: ["error": "\(error)"])
            }
            if Task.isCancelled { break }
            continuation.yield(.state(.reconnecting(after: cursor.last)))
            cursor.failures += 1
            // NB: at most a few seconds apart, however long the outage: the feed is what the app shows live.
            try? await Task.sleep(
                for: Swift.min(retry.delay(after: Swift.min(cursor.failures, 5), retryAfter: nil), .seconds(5)))
        }
        continuation.finish()
    }
}

/// A text frame of the stream, read.
enum Frame {
    case entry(FeedEntry)
    case live
    case other(type: String, data: Data)

    init?(_ text: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let type = object["type"] as? String
        else { return nil }
        let data = (try? JSONSerialization.data(withJSONObject: object["data"] ?? [String: Any]())) ?? Data("{}".utf8)
        if let seq = (object["seq"] as? NSNumber)?.int64Value {
            let at = (object["at"] as? String).flatMap(Feed.date)
            self = .entry(FeedEntry(seq: seq, type: type, at: at, data: data))
        } else if type == "stream.live" {
            self = .live
        } else {
            self = .other(type: type, data: data)
        }
    }
}
