/// An OpenAPI description put together from parts: a service's own document and the parts its modules bring (each of
/// matching's flows describes its routes and its schemas in its own folder). A part has sections like the document's
/// (`paths:`, `components:` with `schemas:`, `parameters:`, ...); each of its entries goes at the end of the same
/// section of the document. An entry the document already has is an error, not an override.
public enum OpenAPIDocument {
    public static func merging(_ document: String, parts: [String]) throws -> String {
        var merged = Section.parse(document, indent: 0)
        for part in parts {
            for (key, body) in Section.parse(part, indent: 0).children {
                if key == "components" {
                    for (component, entries) in Section.parse(body.joined(separator: "\n"), indent: 2).children {
                        try merged.append(entries, at: [key, component])
                    }
                } else {
                    try merged.append(body, at: [key])
                }
            }
        }
        return merged.rendered()
    }

    /// A YAML mapping's keys at one indentation, each with the lines under it, in their order.
    struct Section {
        let indent: Int
        var header: [String: String] = [:]
        var children: [(key: String, lines: [String])] = []

        static func parse(_ text: String, indent: Int) -> Section {
            var section = Section(indent: indent)
            let prefix = String(repeating: " ", count: indent)
            for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
                let isKey =
                    line.hasPrefix(prefix) && line.dropFirst(indent).first.map { $0 != " " && $0 != "#" } == true
                if isKey, let colon = line.firstIndex(of: ":") {
                    let key = String(line[line.index(line.startIndex, offsetBy: indent)..<colon])
                    section.header[key] = line
                    section.children.append((key, []))
                } else if !section.children.isEmpty {
                    section.children[section.children.count - 1].lines.append(line)
                }
            }
            return section
        }

        /// Adds `entries` (lines indented under the section named by `path`) at its end.
        mutating func append(_ entries: [String], at path: [String]) throws {
            let entries = entries.reversed().drop { $0.trimmingCharacters(in: .whitespaces).isEmpty }.reversed()
            guard let key = path.first else { return }
            guard let index = children.firstIndex(where: { $0.key == key }) else {
                header[key] = String(repeating: " ", count: indent) + key + ":"
                children.append((key, Array(entries)))
                return
            }
            if path.count == 1 {
                let existing = Self.keys(children[index].lines, indent: indent + 2)
                if let twice = Self.keys(Array(entries), indent: indent + 2).first(where: existing.contains) {
                    throw ConfigurationError.invalid("openapi.yaml", "\(key) has \(twice) twice")
                }
                var lines = children[index].lines
                while let last = lines.last, last.trimmingCharacters(in: .whitespaces).isEmpty { lines.removeLast() }
                children[index].lines = lines + entries
            } else {
                var inner = Section.parse(children[index].lines.joined(separator: "\n"), indent: indent + 2)
                try inner.append(Array(entries), at: Array(path.dropFirst()))
                children[index].lines = inner.rendered().split(separator: "\n", omittingEmptySubsequences: false)
                    .map(String.init)
            }
        }

        static func keys(_ lines: [String], indent: Int) -> Set<String> {
            let prefix = String(repeating: " ", count: indent)
            return Set(
                lines.compactMap { line in
                    guard line.hasPrefix(prefix), let first = line.dropFirst(indent).first, first != " ", first != "#"
                    else { return nil }
                    return line.dropFirst(indent).split(separator: ":", maxSplits: 1).first.map(String.init)
                })
        }

        func rendered() -> String {
            children.flatMap { [header[$0.key]!] + $0.lines }.joined(separator: "\n")
        }
    }
}
