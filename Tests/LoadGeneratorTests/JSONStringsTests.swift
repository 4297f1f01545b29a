import Foundation
import NIOCore
import Testing

@testable import LoadGenerator

/// The chat sender's request bodies, written without `JSONSerialization`: a JSON parser reads back what was given.
@Suite struct JSONStringsTests {
    @Test func fieldsReadBackAsGivenWhateverTheirCharacters() throws {
        let texts = [
            "", "Viesti 1 🙂", "quote \" and backslash \\", "line\nbreak\ttab\r", "\u{0}\u{1f}\u{7f}", "ä/ö </script>",
        ]
        for text in texts {
            let body = ByteBuffer(jsonStrings: ["id": "6f1c2b1e-0000-4000-8000-000000000001", "text": text])
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: String])
            #expect(object == ["id": "6f1c2b1e-0000-4000-8000-000000000001", "text": text])
        }
    }

    @Test func noFieldsIsAnEmptyObject() {
        #expect(String(buffer: ByteBuffer(jsonStrings: [:])) == "{}")
    }
}
