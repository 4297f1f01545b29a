import Foundation
import ServiceKit

extension ServiceRequestContext {
    /// The `{id}` path parameter; one that is not a UUID names nothing, so it is 404 like a missing one.
    public func id(_ what: String) throws -> UUID {
        guard let id = parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw MatchingError.notFound(what) }
        return id
    }
}
