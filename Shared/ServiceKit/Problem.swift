import Foundation
import Hummingbird

/// An RFC 9457 problem: what every error response of every service is.
public struct Problem: Error, HTTPResponseError, Equatable, Sendable {
    public var status: HTTPResponse.Status
    public var title: String
    public var detail: String?
    /// The request field at fault, for validation errors.
    public var field: String?
    /// A URI naming the kind of problem; `about:blank` when the status says it all.
    public var type: String
    /// Extra headers (`Retry-After`, `WWW-Authenticate`).
    public var headers: HTTPFields

    public init(
        _ status: HTTPResponse.Status, title: String? = nil, detail: String? = nil, field: String? = nil,
        type: String = "about:blank", headers: HTTPFields = [:]
    ) {
        self.status = status
        self.title = title ?? status.reasonPhrase
        self.detail = detail
        self.field = field
        self.type = type
        self.headers = headers
    }

    /// 400 for a request field that is missing or wrong.
    public static func invalid(_ field: String, _ detail: String) -> Problem {
        Problem(.badRequest, title: "Invalid request", detail: detail, field: field, type: "/problems/validation")
    }

    /// 404; also the answer for another user's or another campus's resource.
    public static func notFound(_ detail: String = "No such resource.") -> Problem {
        Problem(.notFound, detail: detail)
    }

    /// 409 for an action the resource's current state does not allow.
    public static func conflict(_ detail: String) -> Problem {
        Problem(.conflict, title: "Conflict", detail: detail, type: "/problems/state-conflict")
    }

    public static let unauthorized = Problem(
        .unauthorized, detail: "A valid access token is required.", headers: [.wwwAuthenticate: "Bearer"])

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = Body(
            type: type, title: title, status: Int(status.code), detail: detail, field: field, instance: request.uri.path
        )
        var fields = headers
        fields[.contentType] = "application/problem+json"
        return Response(
            status: status, headers: fields,
            body: .init(byteBuffer: ByteBuffer(bytes: try ServiceJSON.encoder.encode(body))))
    }

    /// The JSON members of a problem.
    private struct Body: Encodable {
        var type: String
        var title: String
        var status: Int
        var detail: String?
        var field: String?
        var instance: String
    }

    public static func == (lhs: Problem, rhs: Problem) -> Bool {
        lhs.status == rhs.status && lhs.title == rhs.title && lhs.detail == rhs.detail && lhs.field == rhs.field
    }
}
