import Foundation

/// What an event tells the people it concerns when no app of theirs is open: a title and a sentence they can read,
/// written by the flow that knows what happened. Notifications pushes an entry that carries one (and every message);
/// an entry without one waits in the feed for the app.
public struct Notice: Codable, Sendable, Equatable {
    public var title: String
    public var body: String

    public init(title: String, body: String) {
        self.title = title
        self.body = body
    }

    /// "Olli Virtanen" → "Olli": how a push names a person.
    public static func firstName(_ name: String) -> String {
        String(name.split(separator: " ").first ?? Substring(name))
    }
}
