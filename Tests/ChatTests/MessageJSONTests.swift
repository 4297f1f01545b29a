import Contracts
import Foundation
import ServiceKit
import Testing

@testable import Chat

/// A message's event and answer, written byte by byte on the send's path, against what `JSONEncoder` writes for them.
@Suite struct MessageJSONTests {
    /// Every control character, what must be escaped, what may not be, and characters of several bytes.
    static let texts: [String] = [
        "Hei!", "", "quote \" and backslash \\ and slash /", "ä/ö </script> 🙂 e\u{301}", "\u{7f}\u{2028}\u{feff}",
        String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self),
    ]

    static let sentAt: [Date] = [
        Date(timeIntervalSince1970: 1_796_000_000), Date(timeIntervalSince1970: 1_796_000_000.5),
        Date(timeIntervalSince1970: 951_782_400.25),  // 29 February 2000
    ]

    @Test func theAnswerIsWhatTheServicesEncoderWrites() throws {
        for text in Self.texts {
            for sentAt in Self.sentAt {
                let message = Message(
                    id: UUID(), conversationId: UUID(), senderId: UUID(), text: text, sentAt: sentAt,
                    removed: text.isEmpty)
                let encoded = try ServiceJSON.encoder.encode(message)
                #expect(
                    String(decoding: message.json, as: UTF8.self) == String(decoding: encoded, as: UTF8.self),
                    "\(text.debugDescription) at \(sentAt)")
            }
        }
    }

    @Test func theEventReadsBackAsTheEncodersDoes() throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        for text in Self.texts {
            for (sentAt, recipients) in zip(Self.sentAt, [[], [UUID()], [UUID(), UUID()]]) {
                let event = MessageSent(
                    messageId: UUID(), conversationId: UUID(), senderId: UUID(), senderName: "Aino \"A\" \\ /\n",
                    recipients: recipients, text: text, sentAt: sentAt)
                let written = try JSONSerialization.jsonObject(with: Data(event.json.utf8)) as? NSDictionary
                let encoded = try JSONSerialization.jsonObject(with: try encoder.encode(event)) as? NSDictionary
                #expect(written != nil)
                #expect(written == encoded, "\(text.debugDescription) at \(sentAt)")
            }
        }
    }
}
