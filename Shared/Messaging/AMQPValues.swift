import CRabbitMQ
import Foundation
import NIOConcurrencyHelpers

/// A message as it leaves through the publisher.
struct OutgoingMessage {
    var exchange: String
    var routingKey: String
    var messageId: String
    var type: String
    var timestamp: Date
    var traceparent: String?
    var contentType = "application/json"
    var body: Data
}

/// A message as the broker delivered it.
public struct Delivery: Sendable {
    let tag: UInt64
    /// The exchange it was published to: its producer's.
    public let exchange: String
    public let routingKey: String
    public let messageId: String?
    /// The versioned type, `user.registered.v1`.
    public let type: String?
    public let traceparent: String?
    /// How many times the broker has delivered it before (quorum queues count).
    public let deliveryCount: Int
    public let isRedelivered: Bool
    public let body: Data
}

/// The values this code puts in AMQP tables.
enum AMQPFieldValue {
    case string(String)
    case integer(Int64)
}

/// C copies of strings for one librabbitmq call, freed when it is released. NB: `amqp_cstring_bytes` on a Swift
/// string would point into a temporary buffer that is gone before the call.
final class CStrings {
    private var copies: [UnsafeMutablePointer<CChar>] = []

    func bytes(_ string: String) -> amqp_bytes_t {
        let copy = strdup(string)!
        copies.append(copy)
        return amqp_bytes_t(len: strlen(copy), bytes: UnsafeMutableRawPointer(copy))
    }

    deinit {
        for copy in copies { free(copy) }
    }
}

/// Calls `body` with an AMQP table built from `entries`, whose strings live in `strings`.
func withTable<R>(_ entries: [(String, AMQPFieldValue)], _ strings: CStrings, _ body: (amqp_table_t) -> R) -> R {
    var tableEntries = entries.map { key, value -> amqp_table_entry_t in
        var field = amqp_field_value_t()
        switch value {
        case .string(let text):
            field.kind = UInt8(ascii: "S")
            field.value.bytes = strings.bytes(text)
        case .integer(let number):
            field.kind = UInt8(ascii: "l")
            field.value.i64 = number
        }
        return amqp_table_entry_t(key: strings.bytes(key), value: field)
    }
    return withExtendedLifetime(strings) {
        tableEntries.withUnsafeMutableBufferPointer { buffer in
            body(amqp_table_t(num_entries: Int32(buffer.count), entries: buffer.baseAddress))
        }
    }
}

extension String {
    init(bytes: amqp_bytes_t) {
        guard bytes.len > 0, let pointer = bytes.bytes else {
            self = ""
            return
        }
        self = String(decoding: UnsafeRawBufferPointer(start: pointer, count: bytes.len), as: UTF8.self)
    }
}

extension Int {
    /// Reads any integer kind of AMQP field.
    init?(integer field: amqp_field_value_t) {
        switch field.kind {
        case UInt8(ascii: "b"): self = Int(field.value.i8)
        case UInt8(ascii: "B"): self = Int(field.value.u8)
        case UInt8(ascii: "s"), UInt8(ascii: "U"): self = Int(field.value.i16)
        case UInt8(ascii: "u"): self = Int(field.value.u16)
        case UInt8(ascii: "I"): self = Int(field.value.i32)
        case UInt8(ascii: "i"): self = Int(field.value.u32)
        case UInt8(ascii: "l"), UInt8(ascii: "L"): self = Int(field.value.i64)
        default: return nil
        }
    }
}

extension timeval {
    init(seconds: Double) {
        let clamped = max(0, seconds)
        self.init(tv_sec: Int(clamped), tv_usec: Int((clamped - clamped.rounded(.down)) * 1_000_000))
    }
}
