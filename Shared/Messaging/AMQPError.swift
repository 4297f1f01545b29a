import CRabbitMQ

/// A failure reported by librabbitmq or the broker, with the broker's reply code when it sent one.
public struct AMQPError: Error, CustomStringConvertible, Sendable {
    public let message: String
    /// The AMQP reply code (404 not found, 406 precondition failed, 320 connection forced), when the broker sent one.
    public let replyCode: Int?

    public init(_ message: String, replyCode: Int? = nil) {
        self.message = message
        self.replyCode = replyCode
    }

    public var description: String {
        replyCode.map { "AMQP error \($0): \(message)" } ?? "AMQP error: \(message)"
    }
}

/// What librabbitmq's replies and status codes say, as errors.
extension AMQPConnection {

    /// Throws what went wrong when `reply` is not a normal one, naming `action`.
    static func check(_ reply: amqp_rpc_reply_t, _ action: String) throws {
        switch reply.reply_type {
        case AMQP_RESPONSE_NORMAL:
            return
        case AMQP_RESPONSE_SERVER_EXCEPTION:
            switch reply.reply.id {
            case AMQP_CONNECTION_CLOSE_METHOD:
                let close = reply.reply.decoded.assumingMemoryBound(to: amqp_connection_close_t.self).pointee
                throw AMQPError(
                    "\(action): connection closed: \(String(bytes: close.reply_text))", replyCode: Int(close.reply_code)
                )
            case AMQP_CHANNEL_CLOSE_METHOD:
                let close = reply.reply.decoded.assumingMemoryBound(to: amqp_channel_close_t.self).pointee
                throw AMQPError(
                    "\(action): channel closed: \(String(bytes: close.reply_text))", replyCode: Int(close.reply_code))
            default:
                throw AMQPError("\(action): unexpected server method \(reply.reply.id)")
            }
        case AMQP_RESPONSE_LIBRARY_EXCEPTION:
            throw AMQPError("\(action): \(describe(status: reply.library_error))")
        default:
            throw AMQPError("\(action): no reply")
        }
    }

    static func describe(status: Int32) -> String {
        String(cString: amqp_error_string2(status))
    }
}
