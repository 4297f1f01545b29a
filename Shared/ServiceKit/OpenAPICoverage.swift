import Hummingbird

/// Compares a router's routes with the operations of an OpenAPI document, so that a service's description
/// cannot drift from what it serves.
public enum OpenAPICoverage {
    /// `METHOD /path` of every route the router has but the document lacks, and of every documented operation
    /// the router does not serve.
    public static func gaps(router: Router<ServiceRequestContext>, openAPI: String) -> [String] {
        let served = Set(router.routes.map { "\($0.method.rawValue) \(normalized("\($0.path)"))" })
        let documented = operations(in: openAPI)
        return
            (served.subtracting(documented).map { "undocumented: \($0)" }
            + documented.subtracting(served).map { "not served: \($0)" }).sorted()
    }

    /// `METHOD /path` for each operation under `paths:` (two-space indented paths, four-space methods).
    static func operations(in openAPI: String) -> Set<String> {
        var operations = Set<String>()
        var path: String?
        var isInPaths = false
        for line in openAPI.split(separator: "\n", omittingEmptySubsequences: true) {
            if !line.hasPrefix(" ") {
                isInPaths = line.hasPrefix("paths:")
                continue
            }
            guard isInPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), let path {
                let key = line.dropFirst(4).prefix { $0 != ":" }
                if ["get", "post", "put", "patch", "delete"].contains(key) {
                    operations.insert("\(key.uppercased()) \(normalized(path))")
                }
            }
        }
        return operations
    }

    /// `/v1/orders/:id` and `/v1/orders/{id}` both become `/v1/orders/{}`.
    private static func normalized(_ path: String) -> String {
        let trimmed = path.hasPrefix("/") ? path : "/" + path
        return trimmed.split(separator: "/", omittingEmptySubsequences: false).map { component in
            component.hasPrefix(":") || (component.hasPrefix("{") && component.hasSuffix("}"))
                ? "{}" : String(component)
        }.joined(separator: "/")
    }
}
