import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Postgres

/// Turns every error into a problem+json response: problems as they are, Hummingbird's HTTP errors by status,
/// and anything unexpected into a logged 500 whose id the client sees.
public struct ProblemMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext

    public init() {}

    public func handle(
        _ request: Request, context: ServiceRequestContext,
        next: (Request, ServiceRequestContext) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let problem as Problem {
            return try problem.response(from: request, context: context)
        } catch let error as any ProblemConvertible {
            return try error.problem.response(from: request, context: context)
        } catch let error as PostgresError where error.isConnectionFailure {
            context.logger.warning("database unreachable", metadata: ["error": "\(error)"])
            return try Problem(
                .serviceUnavailable, detail: "The service cannot reach its database just now; try again shortly.",
                type: "/problems/unavailable", headers: [.retryAfter: "2"]
            ).response(from: request, context: context)
        } catch let error as DecodingError {
            return try Problem(decoding: error).response(from: request, context: context)
        } catch let error as HTTPError {
            let detail: String? =
                switch error.status {
                case .contentTooLarge: "The request body is larger than this service accepts."
                case .notFound: "No such resource."
                default: error.body
                }
            return try Problem(error.status, detail: detail, headers: error.headers).response(
                from: request, context: context)
        } catch let error as any HTTPResponseError where error.status.code < 500 {
            return try Problem(error.status).response(from: request, context: context)
        } catch {
            let errorId = UUID().uuidString.lowercased()
            context.logger.error(
                "unexpected error", metadata: ["errorId": "\(errorId)", "error": "\(String(reflecting: error))"])
            return try Problem(
                .internalServerError, detail: "Something went wrong on our side. Error id: \(errorId).",
                type: "/problems/internal"
            ).response(from: request, context: context)
        }
    }
}

/// A service's error type: each case says which problem it answers with.
public protocol ProblemConvertible: Error {
    var problem: Problem { get }
}

/// Sets one header on every answer, errors included: `X-Content-Type-Options: nosniff` on every service's,
/// `Cache-Control: no-store` on those that hold tokens.
public struct HeaderMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext
    let name: HTTPField.Name
    let value: String

    public init(_ name: HTTPField.Name, _ value: String) {
        self.name = name
        self.value = value
    }

    public func handle(
        _ request: Request, context: ServiceRequestContext,
        next: (Request, ServiceRequestContext) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        response.headers[name] = value
        return response
    }
}

extension HTTPField.Name {
    public static let xContentTypeOptions = Self("X-Content-Type-Options")!
}

/// Refuses a request body over `limit` bytes with 413 before any handler reads it.
public struct BodyLimitMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext
    let limit: Int

    public init(limit: Int) {
        self.limit = limit
    }

    public func handle(
        _ request: Request, context: ServiceRequestContext,
        next: (Request, ServiceRequestContext) async throws -> Response
    ) async throws -> Response {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw HTTPError(.contentTooLarge)
        }
        var request = request
        if request.method != .get && request.method != .head {
            _ = try await request.collectBody(upTo: limit)
        }
        return try await next(request, context)
    }
}

/// Answers 405 with `Allow` where the router alone would answer 404: a path the service serves, asked with a
/// method it does not serve there. The methods come from the OpenAPI description, which a debug build keeps equal
/// to the routes (`checkDescription`).
public struct MethodNotAllowedMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext
    /// Each documented path as its segments (`nil` for a parameter), with the methods it answers.
    let paths: [(segments: [Substring?], methods: Set<String>)]

    public init(openAPI: String) {
        var methodsByPath: [String: Set<String>] = [:]
        for operation in OpenAPICoverage.operations(in: openAPI) {
            let parts = operation.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            methodsByPath[String(parts[1]), default: []].insert(String(parts[0]))
        }
        paths = methodsByPath.map { path, methods in
            (path.split(separator: "/", omittingEmptySubsequences: false).map { $0 == "{}" ? nil : $0 }, methods)
        }
    }

    public func handle(
        _ request: Request, context: ServiceRequestContext,
        next: (Request, ServiceRequestContext) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            let allowed = allowedMethods(at: request.uri.path)
            guard !allowed.isEmpty, !allowed.contains(request.method.rawValue) else { throw error }
            let list = allowed.sorted().joined(separator: ", ")
            throw Problem(
                .methodNotAllowed, detail: "\(request.uri.path) answers \(list) only.", headers: [.allow: list])
        }
    }

    /// The methods of every documented path that `path` matches.
    func allowedMethods(at path: String) -> Set<String> {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        var allowed = Set<String>()
        for candidate in paths where candidate.segments.count == segments.count {
            let matches = zip(candidate.segments, segments).allSatisfy { expected, actual in
                expected.map { $0 == actual } ?? !actual.isEmpty
            }
            if matches { allowed.formUnion(candidate.methods) }
        }
        return allowed
    }
}

/// Refuses a query parameter that holds U+0000 with a 400 naming it: PostgreSQL text cannot hold the character, and
/// on its way there the value would be cut short at it.
public struct QueryTextMiddleware: RouterMiddleware {
    public typealias Context = ServiceRequestContext

    public init() {}

    public func handle(
        _ request: Request, context: ServiceRequestContext,
        next: (Request, ServiceRequestContext) async throws -> Response
    ) async throws -> Response {
        if request.uri.query?.contains("%00") == true,
            let parameter = request.uri.queryParameters.first(where: { $0.value.contains("\u{0}") })
        {
            throw Problem.invalid(String(parameter.key), "\(parameter.key) must not contain the character U+0000.")
        }
        return try await next(request, context)
    }
}
