import Hummingbird
import Yams

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

    /// `METHOD /path` for each operation under `paths:`.
    static func operations(in openAPI: String) -> Set<String> {
        // NB: a document Yams cannot read has none; `OpenAPIDocument.merging` refused it when the service started.
        guard let paths = (try? Yams.compose(yaml: openAPI))?.mapping?["paths"]?.mapping else { return [] }
        var operations = Set<String>()
        for (path, item) in paths {
            guard let path = path.scalar?.string, path.hasPrefix("/"), let item = item.mapping else { continue }
            for method in item.keys.compactMap({ $0.scalar?.string }) where methods.contains(method) {
                operations.insert("\(method.uppercased()) \(normalized(path))")
            }
        }
        return operations
    }

    private static let methods: Set<String> = ["get", "post", "put", "patch", "delete"]

    /// `/v1/orders/:id` and `/v1/orders/{id}` both become `/v1/orders/{}`.
    private static func normalized(_ path: String) -> String {
        let trimmed = path.hasPrefix("/") ? path : "/" + path
        return trimmed.split(separator: "/", omittingEmptySubsequences: false).map { component in
            component.hasPrefix(":") || (component.hasPrefix("{") && component.hasSuffix("}"))
                ? "{}" : String(component)
        }.joined(separator: "/")
    }
}
