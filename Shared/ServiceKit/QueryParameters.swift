import Foundation

/// The query parameters every list shares, read once: a page size and an opaque page cursor. Bad values are 400
/// problems that name the parameter.
public enum QueryParameters {
    /// `limit`: a page size within `range`, `default` when not given.
    public static func limit(_ raw: String?, default: Int = 20, range: ClosedRange<Int> = 1...50) throws -> Int {
        guard let raw else { return `default` }
        guard let limit = Int(raw), range.contains(limit) else {
            throw Problem.invalid("limit", "limit is a number from \(range.lowerBound) to \(range.upperBound).")
        }
        return limit
    }
}

/// A page cursor (`after`, answered as `next`): the fields that place the last item of a page, opaque to clients as
/// base64 (URL alphabet, unpadded) of the fields joined by `|`. Each list says which fields, and how many.
public enum PageCursor {
    public static func text(_ fields: [String]) -> String {
        Data(fields.joined(separator: "|").utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The `count` fields of a cursor this service wrote; 400 naming `after` for anything else.
    public static func fields(_ raw: String, count: Int) throws -> [String] {
        var base64 = raw.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else {
            throw invalid
        }
        let fields = text.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == count else { throw invalid }
        return fields
    }

    public static let invalid = Problem.invalid("after", "after is the next value of a previous page.")
}
