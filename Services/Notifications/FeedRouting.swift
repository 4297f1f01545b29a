import Contracts
import Foundation
import ServiceKit

/// Where each user's entries go live.
enum FeedRouting {
    /// Where notifications sends each user's feed entries live, routing key `user.<id>`: every notifications
    /// replica binds its own exclusive queue to the users whose sockets it holds.
    static let liveExchange = LiveFrames.exchange

    /// The routing key of a user's live messages.
    static func liveKey(_ userId: UUID) -> String {
        LiveFrames.routingKey(userId)
    }
}

/// One entry of a user's feed, as its JSON frame: `{"seq": 42, "type": "...", "at": "...", "data": {...}}`.
struct FeedEntry: Sendable, Equatable {
    var seq: Int64
    var frame: String

    /// The type of an entry whose event named a person who deleted their account: it keeps its seq, not its data.
    static let removedType = "entry.removed"

    /// The seq of a frame `frame(seq:…)` made, read from its start; nil for any other message (a hint).
    static func seq(ofFrame frame: Data) -> Int64? {
        let prefix = Array(#"{"seq":"#.utf8)
        guard frame.starts(with: prefix) else { return nil }
        let digits = frame.dropFirst(prefix.count).prefix(while: {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
        })
        return Int64(String(decoding: digits, as: UTF8.self))
    }

    static func frame(seq: Int64, type: String, at: Date, dataJSON: String) -> String {
        let time = at.formatted(ServiceJSON.timeStyle)
        return #"{"seq":\#(seq),"type":"\#(type)","at":"\#(time)","data":\#(dataJSON)}"#
    }
}

/// The rules of the stream's requests, without I/O.
enum FeedRules {
    static func after(_ raw: String?) throws(NotificationError) -> Int64 {
        guard let raw else { return 0 }
        guard let after = Int64(raw), after >= 0 else {
            throw .invalid(field: "after", "after is the last seq the client has, 0 or more.")
        }
        return after
    }
}
