import Contracts
import Foundation

/// What a feed entry's push says, from the entry alone, naming no flow: a message is its sender and its text; an
/// entry whose data carries a `notice` (`{title, body}`, which the flow that published it wrote) says that; any other
/// says what happened, from its type. An entry with `expiresAt` (an answer awaited) is urgent and dies with it; a
/// conversation's pushes collapse into its newest.
enum PushContent {
    static let appName = "Tarrare"
    /// How long a push is worth sending when its entry does not say: a day.
    static let defaultTimeToLive = 86_400

    static func message(type: String, seq: Int64, dataJSON: String, badge: Int? = nil, now: Date = Date())
        -> PushMessage
    {
        let data = (try? JSONSerialization.jsonObject(with: Data(dataJSON.utf8))) as? [String: Any] ?? [:]
        var message = PushMessage(
            type: type, seq: seq, title: appName, body: sentence(of: type), open: nil,
            timeToLive: defaultTimeToLive, collapseKey: nil, isUrgent: false, badge: badge)
        if let conversation = (data["conversationId"] as? String).flatMap(UUID.init(uuidString:)) {
            message.open = "#/chats/\(conversation.uuidString.lowercased())"
            // NB: a Topic is at most 32 base64url characters: the conversation's id without its dashes.
            message.collapseKey = conversation.uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        }
        if type == MessageSent.type, let sender = data["senderName"] as? String, let text = data["text"] as? String {
            message.title = Notice.firstName(sender)
            message.body = String(text.prefix(100))
        }
        if let notice = data["notice"] as? [String: Any], let title = notice["title"] as? String,
            let body = notice["body"] as? String
        {
            (message.title, message.body) = (String(title.prefix(100)), String(body.prefix(300)))
        }
        if let text = data["expiresAt"] as? String,
            let expiresAt = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
                ?? Date(text, strategy: .iso8601)
        {
            message.timeToLive = max(0, Int(expiresAt.timeIntervalSince(now).rounded(.down)))
            message.isUrgent = true
        }
        return message
    }

    /// "entry.removed" → "Entry removed".
    static func sentence(of type: String) -> String {
        let words = type.split(whereSeparator: { $0 == "." || $0 == "_" }).joined(separator: " ")
        return words.prefix(1).uppercased() + words.dropFirst()
    }

}
