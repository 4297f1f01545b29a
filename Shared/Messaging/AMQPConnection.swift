import CRabbitMQ
import Foundation
import NIOConcurrencyHelpers

/// One librabbitmq connection with one channel. Not thread-safe, and every call blocks: its owner uses it from
/// one dedicated thread. There is no automatic reconnect; on any error the owner drops it and opens a new one.
final class AMQPConnection {
    private let state: amqp_connection_state_t
    /// The one channel every connection opens.
    static let channel: amqp_channel_t = 1
    let channel = AMQPConnection.channel
    private var nextPublishTag: UInt64 = 1

    /// Connects and logs in to `url` (`amqp://user:password@host:port/vhost`), asking for heartbeats. `url` may list
    /// the nodes of a cluster separated by commas: each connection tries them in turn, starting one further along
    /// the list than the connection before it, so that a process that lost its node reconnects to another.
    init(url: String, heartbeatSeconds: Int32 = 10, connectTimeout: Double = 5) throws {
        let urls = url.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !urls.isEmpty else { throw AMQPError("no AMQP URL") }
        let first = Self.nextNode.withLockedValue { next in
            defer { next &+= 1 }
            return next
        }
        var failures: [String] = []
        for offset in urls.indices {
            guard let state = amqp_new_connection() else { throw AMQPError("cannot allocate a connection") }
            do {
                try Self.open(
                    state, url: urls[(first + offset) % urls.count], heartbeatSeconds: heartbeatSeconds,
                    connectTimeout: connectTimeout)
                self.state = state
                return
            } catch {
                amqp_destroy_connection(state)
                failures.append("\(error)")
            }
        }
        throw AMQPError(failures.joined(separator: "; "))
    }

    /// Where the next connection starts in a list of nodes.
    private static let nextNode = NIOLockedValueBox(0)

    private static func open(
        _ state: amqp_connection_state_t, url: String, heartbeatSeconds: Int32, connectTimeout: Double
    ) throws {
        var info = amqp_connection_info()
        let urlBuffer = strdup(url)
        defer { free(urlBuffer) }
        guard amqp_parse_url(urlBuffer, &info) == AMQP_STATUS_OK.rawValue else {
            throw AMQPError("cannot parse AMQP URL")
        }
        guard let socket = amqp_tcp_socket_new(state) else {
            throw AMQPError("cannot create a socket")
        }
        var timeout = timeval(seconds: connectTimeout)
        let opened = amqp_socket_open_noblock(socket, info.host, info.port, &timeout)
        guard opened == AMQP_STATUS_OK.rawValue else {
            throw AMQPError("cannot connect to \(String(cString: info.host)):\(info.port): \(describe(status: opened))")
        }
        let login = tarrare_amqp_login(state, info.vhost, 0, 131_072, heartbeatSeconds, info.user, info.password)
        try check(login, "login")
        amqp_channel_open(state, channel)
        try check(amqp_get_rpc_reply(state), "channel.open")
    }

    deinit {
        amqp_destroy_connection(state)
    }

    /// Closes politely; errors are ignored because the connection is being dropped anyway.
    func close() {
        amqp_channel_close(state, channel, AMQP_REPLY_SUCCESS)
        amqp_connection_close(state, AMQP_REPLY_SUCCESS)
    }

    // MARK: Topology

    func declareExchange(_ name: String, type: String) throws {
        let strings = CStrings()
        defer { withExtendedLifetime(strings) {} }
        amqp_exchange_declare(
            state, channel, strings.bytes(name), strings.bytes(type), 0, 1, 0, 0, tarrare_amqp_empty_table())
        try Self.check(amqp_get_rpc_reply(state), "exchange.declare \(name)")
    }

    func declareQueue(_ name: String, arguments: [(String, AMQPFieldValue)]) throws {
        let strings = CStrings()
        defer { withExtendedLifetime(strings) {} }
        _ = withTable(arguments, strings) { table in
            amqp_queue_declare(state, channel, strings.bytes(name), 0, 1, 0, 0, table)
        }
        try Self.check(amqp_get_rpc_reply(state), "queue.declare \(name)")
    }

    func bindQueue(_ queue: String, exchange: String, routingKey: String) throws {
        let strings = CStrings()
        defer { withExtendedLifetime(strings) {} }
        amqp_queue_bind(
            state, channel, strings.bytes(queue), strings.bytes(exchange), strings.bytes(routingKey),
            tarrare_amqp_empty_table())
        try Self.check(amqp_get_rpc_reply(state), "queue.bind \(queue)")
    }

    /// The messages ready in `queue` (not counting those delivered and unacknowledged), asked without changing it;
    /// throws when there is no such queue (the broker then closes the channel, so the connection is dropped).
    func readyMessages(in queue: String) throws -> Int {
        let strings = CStrings()
        defer { withExtendedLifetime(strings) {} }
        let reply = amqp_queue_declare(state, channel, strings.bytes(queue), 1, 0, 0, 0, tarrare_amqp_empty_table())
        try Self.check(amqp_get_rpc_reply(state), "queue.declare passive \(queue)")
        guard let reply else { throw AMQPError("queue.declare returned nothing") }
        return Int(reply.pointee.message_count)
    }

    /// Declares an exclusive, server-named queue that lives as long as this connection.
    func declareExclusiveQueue() throws -> String {
        let reply = amqp_queue_declare(
            state, channel, tarrare_amqp_empty_bytes(), 0, 0, 1, 1, tarrare_amqp_empty_table())
        try Self.check(amqp_get_rpc_reply(state), "queue.declare exclusive")
        guard let reply else { throw AMQPError("queue.declare returned nothing") }
        return String(bytes: reply.pointee.queue)
    }

    func unbindQueue(_ queue: String, exchange: String, routingKey: String) throws {
        let strings = CStrings()
        defer { withExtendedLifetime(strings) {} }
        amqp_queue_unbind(
            state, channel, strings.bytes(queue), strings.bytes(exchange), strings.bytes(routingKey),
            tarrare_amqp_empty_table())
        try Self.check(amqp_get_rpc_reply(state), "queue.unbind \(queue)")
    }

    // MARK: Publishing

    /// Puts the channel in confirm mode: every publish is then acknowledged by the broker.
    func enableConfirms() throws {
        amqp_confirm_select(state, channel)
        try Self.check(amqp_get_rpc_reply(state), "confirm.select")
        nextPublishTag = 1
    }

    /// Publishes one message, by default persistent and with `mandatory` set; returns its confirm tag.
    func publish(_ message: OutgoingMessage, mandatory: Bool = true, persistent: Bool = true) throws -> UInt64 {
        var properties = amqp_basic_properties_t()
        properties._flags =
            amqp_flags_t(AMQP_BASIC_CONTENT_TYPE_FLAG) | amqp_flags_t(AMQP_BASIC_DELIVERY_MODE_FLAG)
            | amqp_flags_t(AMQP_BASIC_MESSAGE_ID_FLAG) | amqp_flags_t(AMQP_BASIC_TYPE_FLAG)
            | amqp_flags_t(AMQP_BASIC_TIMESTAMP_FLAG) | amqp_flags_t(AMQP_BASIC_HEADERS_FLAG)
        properties.delivery_mode = persistent ? 2 : 1
        properties.timestamp = UInt64(max(0, message.timestamp.timeIntervalSince1970))
        let headers: [(String, AMQPFieldValue)] = message.traceparent.map { [("traceparent", .string($0))] } ?? []
        let strings = CStrings()
        defer { withExtendedLifetime(strings) {} }
        properties.content_type = strings.bytes(message.contentType)
        properties.message_id = strings.bytes(message.messageId)
        properties.type = strings.bytes(message.type)
        let status = withTable(headers, strings) { table in
            properties.headers = table
            return message.body.withUnsafeBytes { body in
                let bytes = amqp_bytes_t(len: body.count, bytes: UnsafeMutableRawPointer(mutating: body.baseAddress))
                return amqp_basic_publish(
                    state, channel, strings.bytes(message.exchange), strings.bytes(message.routingKey),
                    mandatory ? 1 : 0, 0,
                    &properties, bytes)
            }
        }
        guard status == AMQP_STATUS_OK.rawValue else {
            throw AMQPError("basic.publish failed: \(Self.describe(status: status))")
        }
        defer { nextPublishTag += 1 }
        return nextPublishTag
    }

    /// Reads frames until every tag from `firstTag` to `lastTag` is confirmed or `timeout` passes. Returns the tags the broker
    /// refused (nack) and the message ids it returned as unroutable.
    func waitForConfirms(from firstTag: UInt64, through lastTag: UInt64, timeout: Double) throws -> (
        nacked: Set<UInt64>, returned: Set<String>
    ) {
        var confirmedThrough = firstTag - 1
        var confirmed = Set<UInt64>()
        var nacked = Set<UInt64>()
        var returned = Set<String>()
        let deadline = Date().addingTimeInterval(timeout)
        func settle(_ tag: UInt64, multiple: Bool, refused: Bool) {
            if multiple {
                for pending in (confirmedThrough + 1)...max(tag, confirmedThrough + 1)
                where !confirmed.contains(pending) {
                    if refused { nacked.insert(pending) }
                    confirmed.insert(pending)
                }
            } else {
                if refused { nacked.insert(tag) }
                confirmed.insert(tag)
            }
            while confirmed.contains(confirmedThrough + 1) { confirmedThrough += 1 }
        }
        while confirmedThrough < lastTag {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw AMQPError("timed out waiting for publisher confirms") }
            var frame = amqp_frame_t()
            var wait = timeval(seconds: remaining)
            let status = amqp_simple_wait_frame_noblock(state, &frame, &wait)
            if status == AMQP_STATUS_TIMEOUT.rawValue { continue }
            guard status == AMQP_STATUS_OK.rawValue else {
                throw AMQPError("waiting for confirms: \(Self.describe(status: status))")
            }
            guard frame.frame_type == UInt8(AMQP_FRAME_METHOD) else { continue }
            let method = frame.payload.method
            switch method.id {
            case AMQP_BASIC_ACK_METHOD:
                let ack = method.decoded.assumingMemoryBound(to: amqp_basic_ack_t.self).pointee
                settle(ack.delivery_tag, multiple: ack.multiple != 0, refused: false)
            case AMQP_BASIC_NACK_METHOD:
                let nack = method.decoded.assumingMemoryBound(to: amqp_basic_nack_t.self).pointee
                settle(nack.delivery_tag, multiple: nack.multiple != 0, refused: true)
            case AMQP_BASIC_RETURN_METHOD:
                var message = amqp_message_t()
                let reply = amqp_read_message(state, channel, &message, 0)
                try Self.check(reply, "reading a returned message")
                if message.properties._flags & amqp_flags_t(AMQP_BASIC_MESSAGE_ID_FLAG) != 0 {
                    returned.insert(String(bytes: message.properties.message_id))
                }
                amqp_destroy_message(&message)
            case AMQP_CHANNEL_CLOSE_METHOD:
                let close = method.decoded.assumingMemoryBound(to: amqp_channel_close_t.self).pointee
                throw AMQPError("channel closed: \(String(bytes: close.reply_text))", replyCode: Int(close.reply_code))
            case AMQP_CONNECTION_CLOSE_METHOD:
                let close = method.decoded.assumingMemoryBound(to: amqp_connection_close_t.self).pointee
                throw AMQPError(
                    "connection closed: \(String(bytes: close.reply_text))", replyCode: Int(close.reply_code))
            default:
                continue
            }
        }
        return (nacked, returned)
    }

    /// Lets librabbitmq send and check heartbeats on an otherwise idle connection.
    func serviceHeartbeats() throws {
        var frame = amqp_frame_t()
        var wait = timeval(seconds: 0)
        let status = amqp_simple_wait_frame_noblock(state, &frame, &wait)
        guard status == AMQP_STATUS_OK.rawValue || status == AMQP_STATUS_TIMEOUT.rawValue else {
            throw AMQPError("connection lost: \(Self.describe(status: status))")
        }
        if status == AMQP_STATUS_OK.rawValue, frame.frame_type == UInt8(AMQP_FRAME_METHOD),
            frame.payload.method.id == AMQP_CONNECTION_CLOSE_METHOD
                || frame.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD
        {
            throw AMQPError("broker closed the connection")
        }
    }

    // MARK: Consuming

    func setPrefetch(_ count: UInt16) throws {
        amqp_basic_qos(state, channel, 0, count, 0)
        try Self.check(amqp_get_rpc_reply(state), "basic.qos")
    }

    /// Consumes `queue`; with `acknowledged` false the broker forgets each message once sent (for what is only a
    /// hint and lost with the connection anyway).
    func consume(queue: String, exclusive: Bool = false, acknowledged: Bool = true) throws {
        let strings = CStrings()
        defer { withExtendedLifetime(strings) {} }
        amqp_basic_consume(
            state, channel, strings.bytes(queue), tarrare_amqp_empty_bytes(), 0, acknowledged ? 0 : 1,
            exclusive ? 1 : 0,
            tarrare_amqp_empty_table())
        try Self.check(amqp_get_rpc_reply(state), "basic.consume \(queue)")
    }

    /// Waits up to `timeout` seconds for one delivery; nil when none came. Heartbeats are serviced while it waits.
    func nextDelivery(timeout: Double) throws -> Delivery? {
        amqp_maybe_release_buffers(state)
        var envelope = amqp_envelope_t()
        var wait = timeval(seconds: timeout)
        let reply = amqp_consume_message(state, &envelope, &wait, 0)
        if reply.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION, reply.library_error == AMQP_STATUS_TIMEOUT.rawValue {
            return nil
        }
        try Self.check(reply, "consuming")
        defer { amqp_destroy_envelope(&envelope) }
        let properties = envelope.message.properties
        func text(_ flag: Int32, _ bytes: amqp_bytes_t) -> String? {
            properties._flags & amqp_flags_t(flag) != 0 ? String(bytes: bytes) : nil
        }
        var deliveryCount = 0
        var traceparent: String?
        if properties._flags & amqp_flags_t(AMQP_BASIC_HEADERS_FLAG) != 0 {
            let table = properties.headers
            for index in 0..<Int(table.num_entries) {
                let entry = table.entries[index]
                switch String(bytes: entry.key) {
                case "x-delivery-count": deliveryCount = Int(integer: entry.value) ?? 0
                case "traceparent" where entry.value.kind == UInt8(ascii: "S"):
                    traceparent = String(bytes: entry.value.value.bytes)
                default: break
                }
            }
        }
        let body = envelope.message.body
        return Delivery(
            tag: envelope.delivery_tag,
            exchange: String(bytes: envelope.exchange),
            routingKey: String(bytes: envelope.routing_key),
            messageId: text(AMQP_BASIC_MESSAGE_ID_FLAG, properties.message_id),
            type: text(AMQP_BASIC_TYPE_FLAG, properties.type),
            traceparent: traceparent,
            deliveryCount: deliveryCount,
            isRedelivered: envelope.redelivered != 0,
            body: body.len > 0 ? Data(bytes: body.bytes, count: body.len) : Data())
    }

    func ack(_ tag: UInt64, andEveryEarlier: Bool = false) throws {
        let status = amqp_basic_ack(state, channel, tag, andEveryEarlier ? 1 : 0)
        guard status == AMQP_STATUS_OK.rawValue else { throw AMQPError("basic.ack: \(Self.describe(status: status))") }
    }

    /// Gives the message back: with `requeue`, to be tried again (counted against the delivery limit);
    /// without, straight to the dead-letter queue.
    func reject(_ tag: UInt64, requeue: Bool) throws {
        let status = amqp_basic_nack(state, channel, tag, 0, requeue ? 1 : 0)
        guard status == AMQP_STATUS_OK.rawValue else { throw AMQPError("basic.nack: \(Self.describe(status: status))") }
    }
}
