import Foundation

/// The `recipients` of an event's JSON body, read in one pass over its bytes rather than decoded: `JSONDecoder` read
/// the whole body into values to find them, a sixteenth of notifications' CPU time for each chat message.
///
/// It reads only what it can be sure of: a JSON object whose keys have no escapes, with `recipients` once (or not at
/// all), null or an array of UUID strings. Anything else, malformed or merely unusual, is left to `JSONDecoder`, so
/// that every body reads as it would there, and one that does not decode is dead-lettered as before.
enum Recipients {
    /// The recipients (none when `recipients` is missing or null), or nil when `JSONDecoder` must say.
    static func scan(_ json: String) -> [UUID]? {
        var json = json
        return json.withUTF8 { bytes in
            var scanner = Scanner(bytes: bytes)
            return scanner.recipients()
        }
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        /// Deeper than this is left to `JSONDecoder`.
        static let depthLimit = 64

        mutating func recipients() -> [UUID]? {
            skipSpace()
            guard take(.openBrace) else { return nil }
            var found: [UUID]?
            skipSpace()
            if take(.closeBrace) { return finished() ? [] : nil }
            repeat {
                skipSpace()
                guard let key = string(), !key.escaped else { return nil }
                skipSpace()
                guard take(.colon) else { return nil }
                skipSpace()
                if bytes[key.range].elementsEqual(Self.recipientsKey) {
                    guard found == nil, let uuids = uuids() else { return nil }
                    found = uuids
                } else {
                    guard value(depth: 1) else { return nil }
                }
                skipSpace()
            } while take(.comma)
            guard take(.closeBrace), finished() else { return nil }
            return found ?? []
        }

        private static let recipientsKey = Array("recipients".utf8)

        /// Null or an array of UUID strings without escapes.
        private mutating func uuids() -> [UUID]? {
            if literal("null") { return [] }
            guard take(.openBracket) else { return nil }
            var uuids: [UUID] = []
            skipSpace()
            if take(.closeBracket) { return uuids }
            repeat {
                skipSpace()
                guard let text = string(), !text.escaped,
                    let uuid = UUID(uuidString: String(decoding: bytes[text.range], as: UTF8.self))
                else { return nil }
                uuids.append(uuid)
                skipSpace()
            } while take(.comma)
            return take(.closeBracket) ? uuids : nil
        }

        private mutating func value(depth: Int) -> Bool {
            guard depth <= Self.depthLimit, index < bytes.count else { return false }
            switch bytes[index] {
            case .quote: return string() != nil
            case .openBrace: return container(closedBy: .closeBrace, depth: depth, keyed: true)
            case .openBracket: return container(closedBy: .closeBracket, depth: depth, keyed: false)
            case .t: return literal("true")
            case .f: return literal("false")
            case .n: return literal("null")
            default: return number()
            }
        }

        /// An object (`keyed`) or an array.
        private mutating func container(closedBy close: UInt8, depth: Int, keyed: Bool) -> Bool {
            index += 1
            skipSpace()
            if take(close) { return true }
            repeat {
                skipSpace()
                if keyed {
                    guard string() != nil else { return false }
                    skipSpace()
                    guard take(.colon) else { return false }
                    skipSpace()
                }
                guard value(depth: depth + 1) else { return false }
                skipSpace()
            } while take(.comma)
            return take(close)
        }

        /// A string: the range of its contents and whether it has escapes.
        private mutating func string() -> (range: Range<Int>, escaped: Bool)? {
            guard take(.quote) else { return nil }
            let start = index
            var escaped = false
            while index < bytes.count {
                let byte = bytes[index]
                if byte == .quote {
                    index += 1
                    return (start..<index - 1, escaped)
                }
                guard byte >= 0x20 else { return nil }
                index += 1
                if byte == .backslash {
                    escaped = true
                    guard index < bytes.count else { return nil }
                    let escape = bytes[index]
                    index += 1
                    if escape == .u {
                        guard index + 4 <= bytes.count, bytes[index..<index + 4].allSatisfy(\.isHexDigit) else {
                            return nil
                        }
                        index += 4
                    } else {
                        guard Self.shortEscapes.contains(escape) else { return nil }
                    }
                }
            }
            return nil
        }

        private static let shortEscapes = Set(#""\/bfnrt"#.utf8)

        /// A number as JSON writes one: `-`, an integer without leading zeros, a fraction, an exponent.
        private mutating func number() -> Bool {
            _ = take(.minus)
            guard take(.zero) || digits() else { return false }
            if take(.dot) { guard digits() else { return false } }
            if take(.e) || take(.upperE) {
                _ = take(.plus) || take(.minus)
                guard digits() else { return false }
            }
            return true
        }

        /// One or more digits.
        private mutating func digits() -> Bool {
            let start = index
            while index < bytes.count, bytes[index].isDigit { index += 1 }
            return index > start
        }

        private mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count,
                bytes[index..<index + count].elementsEqual(
                    UnsafeBufferPointer(start: word.utf8Start, count: count))
            else { return false }
            index += count
            return true
        }

        private mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// Nothing but space follows.
        private mutating func finished() -> Bool {
            skipSpace()
            return index == bytes.count
        }
    }
}

extension UInt8 {
    fileprivate static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), colon = UInt8(ascii: ":")
    fileprivate static let comma = UInt8(ascii: ","), openBrace = UInt8(ascii: "{"), closeBrace = UInt8(ascii: "}")
    fileprivate static let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]")
    fileprivate static let minus = UInt8(ascii: "-"), plus = UInt8(ascii: "+"), dot = UInt8(ascii: ".")
    fileprivate static let zero = UInt8(ascii: "0"), e = UInt8(ascii: "e"), upperE = UInt8(ascii: "E")
    fileprivate static let t = UInt8(ascii: "t"), f = UInt8(ascii: "f"), n = UInt8(ascii: "n"), u = UInt8(ascii: "u")

    fileprivate var isDigit: Bool { self >= .zero && self <= UInt8(ascii: "9") }
    fileprivate var isHexDigit: Bool {
        isDigit || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
