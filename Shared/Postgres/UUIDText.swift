import Foundation

/// A UUID's text form (`E621E1F8-C36C-495A-93FC-0C247A3E6E5F`) both ways, as `uuidString` and `UUID(uuidString:)` do
/// it but without the C library's `snprintf` and `sscanf` they call: each took about a microsecond, and a chat message
/// passes some twenty ids to and from PostgreSQL in its services.
extension UUID {
    /// The text form in upper-case hex, as `uuidString` writes it.
    public var hexText: String {
        withUnsafeBytes(of: uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                func digit(_ value: UInt8) -> UInt8 {
                    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
                }
                var index = 0
                for (position, byte) in bytes.enumerated() {
                    if position == 4 || position == 6 || position == 8 || position == 10 {
                        text[index] = UInt8(ascii: "-")
                        index += 1
                    }
                    text[index] = digit(byte >> 4)
                    text[index + 1] = digit(byte & 0x0F)
                    index += 2
                }
                return index
            }
        }
    }

    /// Parses the text form, hex digits in either case with hyphens at their four places; nil for anything else.
    public init?(hexText: String) {
        var text = hexText
        guard let uuid = text.withUTF8(Self.parse) else { return nil }
        self.init(uuid: uuid)
    }

    private static func parse(_ text: UnsafeBufferPointer<UInt8>) -> uuid_t? {
        guard text.count == 36 else { return nil }
        func nibble(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &uuid) { bytes in
            var index = 0
            for position in 0..<16 {
                if index == 8 || index == 13 || index == 18 || index == 23 {
                    guard text[index] == UInt8(ascii: "-") else { return false }
                    index += 1
                }
                guard let high = nibble(text[index]), let low = nibble(text[index + 1]) else { return false }
                bytes[position] = high << 4 | low
                index += 2
            }
            return true
        }
        return parsed ? uuid : nil
    }
}
