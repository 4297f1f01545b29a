import Foundation

/// A statement whose interpolated values become `$n` parameters, never SQL text.
///
///     let sql: SQL = "SELECT name FROM users WHERE id = \(id)"
public struct SQL: ExpressibleByStringInterpolation, Sendable {
    public private(set) var text: String
    public private(set) var parameters: [String?]

    public init(stringLiteral value: String) {
        text = value
        parameters = []
    }

    public init(stringInterpolation: Interpolation) {
        text = stringInterpolation.text
        parameters = stringInterpolation.parameters
    }

    /// Appends another statement fragment, renumbering its parameters.
    public mutating func append(_ other: SQL) {
        var interpolation = Interpolation(literalCapacity: 0, interpolationCount: 0)
        interpolation.text = text
        interpolation.parameters = parameters
        interpolation.appendInterpolation(other)
        text = interpolation.text
        parameters = interpolation.parameters
    }

    public struct Interpolation: StringInterpolationProtocol, Sendable {
        var text = ""
        var parameters: [String?] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount * 3)
        }

        public mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        public mutating func appendInterpolation(_ value: some PostgresEncodable) {
            parameters.append(value.postgresText)
            text += "$\(parameters.count)"
        }

        public mutating func appendInterpolation(_ value: (some PostgresEncodable)?) {
            parameters.append(value?.postgresText)
            text += "$\(parameters.count)"
        }

        /// Embeds another fragment, renumbering its `$n` placeholders after the ones already here.
        ///
        /// NB: by UTF-8 byte: read by character, the outbox's fragment of a chat message took 7 % of chat's CPU.
        public mutating func appendInterpolation(_ fragment: SQL) {
            let offset = parameters.count
            parameters += fragment.parameters
            guard offset > 0 else {
                text += fragment.text
                return
            }
            let dollar = UInt8(ascii: "$")
            let source = Array(fragment.text.utf8)
            var renumbered: [UInt8] = []
            renumbered.reserveCapacity(source.count + 2 * fragment.parameters.count)
            var index = 0
            while index < source.count {
                let byte = source[index]
                renumbered.append(byte)
                index += 1
                guard byte == dollar else { continue }
                var number = 0
                var end = index
                while end < source.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(source[end]) {
                    number = number * 10 + Int(source[end] - UInt8(ascii: "0"))
                    end += 1
                }
                guard end > index else { continue }
                renumbered += String(number + offset).utf8
                index = end
            }
            text += String(decoding: renumbered, as: UTF8.self)
        }

        /// Inserts trusted SQL text (an identifier the program chose), never user input.
        public mutating func appendInterpolation(unescaped text: String) {
            self.text += text
        }
    }
}

/// A value that travels to PostgreSQL as a text parameter.
public protocol PostgresEncodable: Sendable {
    var postgresText: String { get }
}

extension String: PostgresEncodable {
    public var postgresText: String { self }
}

extension Substring: PostgresEncodable {
    public var postgresText: String { String(self) }
}

extension Int: PostgresEncodable {
    public var postgresText: String { String(self) }
}

extension Int32: PostgresEncodable {
    public var postgresText: String { String(self) }
}

extension Int64: PostgresEncodable {
    public var postgresText: String { String(self) }
}

extension Double: PostgresEncodable {
    /// NB: PostgreSQL refuses a subnormal value ("value out of range: underflow"), so one is sent as a zero of its
    /// sign: it differs from it by less than 1e-307.
    public var postgresText: String {
        if isNaN { return "NaN" }
        if isInfinite { return sign == .minus ? "-Infinity" : "Infinity" }
        if isSubnormal { return sign == .minus ? "-0" : "0" }
        return "\(self)"
    }
}

extension Bool: PostgresEncodable {
    public var postgresText: String { self ? "t" : "f" }
}

extension UUID: PostgresEncodable {
    public var postgresText: String { hexText }
}

extension Date: PostgresEncodable {
    public var postgresText: String { PostgresTimestamp.format(self) }
}

extension Data: PostgresEncodable {
    /// bytea in hex form.
    public var postgresText: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]("\\x".utf8)
        out.reserveCapacity(2 + count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension Array: PostgresEncodable where Element == String {
    /// A text[] literal; each element quoted, with a backslash before each quote and backslash in it.
    ///
    /// NB: by UTF-8 byte, not by character: a quote that a combining mark follows is one character with it, which
    /// is not equal to a quote, and left unescaped it ended the element. Faster too, with the feed's JSON in arrays.
    public var postgresText: String {
        let quote = UInt8(ascii: "\"")
        let backslash = UInt8(ascii: "\\")
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        bytes.reserveCapacity(reduce(2) { $0 + $1.utf8.count + 3 })
        for (index, element) in enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(quote)
            for byte in element.utf8 {
                if byte == quote || byte == backslash { bytes.append(backslash) }
                bytes.append(byte)
            }
            bytes.append(quote)
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// JSON text for a `jsonb` parameter: write `\(JSONText(value))::jsonb`.
public struct JSONText: PostgresEncodable {
    public let postgresText: String

    public init(_ value: some Encodable) throws {
        // NB: keys in no particular order: jsonb keeps its own, and sorting them was a tenth of the encoding.
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        postgresText = String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    public init(raw: String) {
        postgresText = raw
    }
}
