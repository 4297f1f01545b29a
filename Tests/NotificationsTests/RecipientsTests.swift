import Foundation
import Testing

@testable import Notifications

/// The recipients read from an event's bytes, against what `JSONDecoder` reads from them.
@Suite struct RecipientsTests {
    private struct Addressed: Decodable {
        var recipients: [UUID]?
    }

    /// What `JSONDecoder` reads, or nil when it refuses the body.
    private static func decoded(_ body: String) -> [UUID]? {
        (try? JSONDecoder().decode(Addressed.self, from: Data(body.utf8))).map { $0.recipients ?? [] }
    }

    static let first = UUID(uuidString: "0b7c8c1e-4a55-4a0e-9f43-2d1c7e6f5a10")!
    static let second = UUID(uuidString: "C1D2E3F4-0000-4000-8000-00000000ABCD")!

    /// An event as PostgreSQL writes a jsonb payload, with strings, numbers, nesting and escapes around the recipients.
    static let event = """
        {"text": "quote \\" brace } bracket ] \\u00e4 \\n", "version": -12.5e+3, "nested": {"recipients": [], \
        "list": [true, false, null, 0, {"a": [1, 2.0E-2]}]}, "senderId": "\(first)", \
        "recipients": ["\(first.uuidString.lowercased())", "\(second)"], "sentAt": "2026-12-06T07:00:00.123Z"}
        """

    @Test(arguments: [
        event, "{}", " {\"recipients\": null} ", "{\"recipients\":[]}", "{\"a\":{\"recipients\":[\"\(first)\"]}}",
        "{\"recipients\":[\"\(first)\",\"\(first)\"],\"b\":[[[[]]]]}",
    ])
    func readsWhatTheDecoderReads(_ body: String) throws {
        let scanned = try #require(Recipients.scan(body), "left to the decoder")
        #expect(scanned == Self.decoded(body))
    }

    /// Bodies the decoder reads or refuses for reasons the scan does not follow: it leaves them to the decoder.
    @Test(arguments: [
        "[]", "\"recipients\"", "{\"recipi\\u0065nts\":[\"\(first)\"]}",
        "{\"recipients\":[\"\(first)\"],\"recipients\":[]}",
        "{\"recipients\":\"\(first)\"}", "{\"recipients\":[\"not a uuid\"]}", "{\"recipients\":[1]}",
        "{\"recipients\":[\"\(first)\"]", "{\"a\":01}", "{\"a\":1.}", "{\"a\":-}", "{\"a\":tru}", "{\"a\":\"\u{1}\"}",
        "{\"a\":\"\\x\"}", "{\"a\":\"\\u12G4\"}", "{\"a\":[1,]}", "{\"a\":1,}", "{} {}", "{\"a\" 1}",
        String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
        "{\"a\":" + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}",
    ])
    func leavesTheRestToTheDecoder(_ body: String) {
        #expect(Recipients.scan(body) == nil)
    }

    /// Every body one byte away from the event (a byte deleted, or one of JSON's own inserted): whatever the scan
    /// reads, the decoder reads too.
    @Test func neverReadsWhatTheDecoderRefusesOrReadsOtherwise() {
        let bytes = Array(Self.event.utf8)
        var variants: [[UInt8]] = []
        for index in bytes.indices {
            var deleted = bytes
            deleted.remove(at: index)
            variants.append(deleted)
            for inserted in Array("\"{}[],:0-e\\ ".utf8) {
                var longer = bytes
                longer.insert(inserted, at: index)
                variants.append(longer)
            }
        }
        var scanned = 0
        for variant in variants {
            let body = String(decoding: variant, as: UTF8.self)
            guard let recipients = Recipients.scan(body) else { continue }
            scanned += 1
            #expect(recipients == Self.decoded(body), "\(body)")
        }
        // NB: so that the check above saw bodies the scan read (insertions into strings keep the body valid).
        #expect(scanned > 100)
    }
}
