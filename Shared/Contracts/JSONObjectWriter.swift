import Foundation

/// A flat JSON object written byte by byte, its keys in the order they are added, for the objects a hot path writes
/// for every message (a chat message's event and its answer): what `JSONEncoder` writes for them, without the cost of
/// its encoding containers (a tenth of chat's CPU at a message a moment).
///
/// Strings are escaped as `JSONEncoder` escapes them with `.withoutEscapingSlashes`: quotes, backslashes and control
/// characters (`\b`, `\f`, `\n`, `\r` and `\t` by their short forms, the rest as `\u00XX`); everything else is
/// written as it is. UUIDs are written as `Codable` writes them (`uuidString`).
public struct JSONObjectWriter: Sendable {
    private var bytes: [UInt8]

    public init() {
        bytes = [UInt8(ascii: "{")]
        bytes.reserveCapacity(256)
    }

    /// The object, closed.
    public consuming func finished() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    public mutating func add(_ key: String, _ value: String) {
        addKey(key)
        addString(value)
    }

    public mutating func add(_ key: String, _ value: UUID) {
        add(key, value.uuidString)
    }

    public mutating func add(_ key: String, _ values: [UUID]) {
        addKey(key)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            addString(value.uuidString)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    public mutating func add(_ key: String, _ value: Bool) {
        addKey(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func add(_ key: String, _ value: Int64) {
        addKey(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// A time as `style` writes it.
    public mutating func add(_ key: String, _ value: Date, _ style: Date.ISO8601FormatStyle) {
        add(key, value.formatted(style))
    }

    private mutating func addKey(_ key: String) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        addString(key)
        bytes.append(UInt8(ascii: ":"))
    }

    private mutating func addString(_ text: String) {
        let backslash = UInt8(ascii: "\\")
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), backslash:
                bytes.append(backslash)
                bytes.append(byte)
            case 0x08: bytes.append(contentsOf: [backslash, UInt8(ascii: "b")])
            case 0x0c: bytes.append(contentsOf: [backslash, UInt8(ascii: "f")])
            case 0x0a: bytes.append(contentsOf: [backslash, UInt8(ascii: "n")])
            case 0x0d: bytes.append(contentsOf: [backslash, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [backslash, UInt8(ascii: "t")])
            case ..<0x20:
                bytes.append(contentsOf: [backslash, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0xf)])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
