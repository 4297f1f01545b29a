import Yams

/// An OpenAPI description put together from parts: a service's own document and the parts its modules bring (each of
/// matching's flows describes its routes and its schemas in its own folder). A part has sections like the document's
/// (`paths:`, `components:` with `schemas:`, `parameters:`, ...); each of its entries goes at the end of the same
/// section of the document. An entry the document already has is an error, not an override.
public enum OpenAPIDocument {
    public static func merging(_ document: String, parts: [String]) throws -> String {
        var merged = try Outline(document)
        for text in parts {
            let part = try Outline(text)
            for key in part.keys(at: []) {
                let sections = key == "components" ? part.keys(at: [key]).map { [key, $0] } : [[key]]
                for section in sections {
                    try merged.append(part.entries(at: section), keys: part.keys(at: section), at: section)
                }
            }
        }
        return merged.text
    }

    /// A YAML text as its lines, with the line where each entry of its mappings starts, as Yams reads it. Parts are
    /// joined line by line, so that the description served keeps its authors' layout.
    struct Outline {
        private(set) var lines: [String]
        private var root: Node.Mapping

        init(_ text: String) throws {
            lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
            root = try Self.read(text)
        }

        var text: String { lines.joined(separator: "\n") }

        /// The keys of the mapping at `path` (`[]` for the top level), in their order.
        func keys(at path: [String]) -> [String] {
            let mapping = path.isEmpty ? root : locate(path)?.value.mapping
            return mapping?.keys.compactMap { $0.scalar?.string } ?? []
        }

        /// The lines under the key at `path`, without the blank lines at their end.
        func entries(at path: [String]) -> [String] {
            guard let entry = locate(path) else { return [] }
            return Self.trimmed(lines[entry.lines.dropFirst()])
        }

        /// Adds `entries`, lines that hold `keys`, at the end of the section at `path`, which is made when missing.
        mutating func append(_ entries: [String], keys: [String], at path: [String]) throws {
            if let section = locate(path) {
                let existing = Set(self.keys(at: path))
                if let twice = keys.first(where: existing.contains) {
                    throw ConfigurationError.invalid("openapi.yaml", "\(path.last ?? "") has \(twice) twice")
                }
                let body = section.lines.dropFirst()
                lines.replaceSubrange(body, with: Self.trimmed(lines[body]) + entries)
            } else {
                // The missing sections go at the end of the nearest one that exists, each indented two more.
                var depth = path.count - 1
                while depth > 0, locate(Array(path.prefix(depth))) == nil { depth -= 1 }
                let end = depth == 0 ? lines.count : locate(Array(path.prefix(depth)))!.lines.upperBound
                let headers = path[depth...].enumerated().map { String(repeating: "  ", count: depth + $0) + $1 + ":" }
                lines.insert(contentsOf: headers + entries, at: end)
            }
            root = try Self.read(text)
        }

        /// The value at `path` and its lines: from its key's line to the line of the next key of its mapping or of a
        /// mapping it is in.
        private func locate(_ path: [String]) -> (value: Node, lines: Range<Int>)? {
            var mapping: Node.Mapping? = root
            var found: (value: Node, lines: Range<Int>)?
            var end = lines.count
            for key in path {
                guard let entries = mapping, let index = entries.firstIndex(where: { $0.key.scalar?.string == key }),
                    let start = entries[index].key.mark?.line
                else { return nil }
                let next = entries.index(after: index)
                if next < entries.endIndex, let line = entries[next].key.mark?.line { end = line - 1 }
                found = (entries[index].value, start - 1..<end)
                mapping = entries[index].value.mapping
            }
            return found
        }

        private static func read(_ text: String) throws -> Node.Mapping {
            let node: Node?
            do {
                node = try Yams.compose(yaml: text)
            } catch {
                throw ConfigurationError.invalid("openapi.yaml", "\(error)")
            }
            guard let node else { return Node.Mapping([]) }
            guard let mapping = node.mapping else {
                throw ConfigurationError.invalid("openapi.yaml", "its top level is not a mapping")
            }
            return mapping
        }

        private static func trimmed(_ lines: ArraySlice<String>) -> [String] {
            Array(lines.reversed().drop { $0.allSatisfy(\.isWhitespace) }.reversed())
        }
    }
}
