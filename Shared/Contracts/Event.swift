import Foundation

/// An event that crosses services. Its routing key is `type`; the AMQP type property is `type.v<schemaVersion>`.
/// An event that concerns users names them in a JSON member `recipients` (an array of user ids): notifications puts
/// it in those users' feeds, whatever service or flow published it.
public protocol Event: Codable, Sendable {
    /// The routing key, past tense: `user.registered`.
    static var type: String { get }
    /// The version of the JSON shape; a breaking change is a new version.
    static var schemaVersion: Int { get }
    /// The aggregate the event is about.
    var aggregateId: UUID { get }
    /// The aggregate's version after the change; it only grows.
    var version: Int64 { get }
}

extension Event {
    public static var schemaVersion: Int { 1 }
}
