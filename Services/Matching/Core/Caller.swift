import Foundation
import ServiceKit

/// The caller, as every flow needs to know them: every query is scoped by their user and campus.
public struct Caller: Sendable {
    public var userId: UUID
    public var campus: String
    public var name: String

    public init(userId: UUID, campus: String, name: String) {
        self.userId = userId
        self.campus = campus
        self.name = name
    }
}

extension ServiceRequestContext {
    /// The authenticated caller.
    public func caller() throws -> Caller {
        let identity = try requireIdentity()
        return Caller(userId: identity.userId, campus: identity.campus, name: identity.name)
    }

    /// The `{id}` path parameter; one that is not a UUID names nothing, so it is 404 like a missing one.
    public func id(_ what: String) throws -> UUID {
        guard let id = parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw MatchingError.notFound(what) }
        return id
    }
}
