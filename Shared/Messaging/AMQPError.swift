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
