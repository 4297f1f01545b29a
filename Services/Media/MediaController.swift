import Foundation
import Hummingbird
import MediaStorage
import ServiceKit

/// The media API: upload an image, read one of the caller's campus, delete one's own.
struct MediaController: Sendable {
    let library: MediaLibrary

    /// Images never change under an id: clients and the browser may keep them as long as they like, but only
    /// for the reader who asked (they are not public).
    static let cacheControl = "private, max-age=31536000, immutable"

    func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        router.group("/v1/media")
            .add(middleware: AuthenticationMiddleware(verifier: verifier))
            .post(use: upload)
            .get("{id}", use: read)
            .delete("{id}", use: delete)
    }

    struct Uploaded: ResponseEncodable {
        var id: UUID
        var width: Int
        var height: Int
        var contentType: String
    }

    func upload(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Uploaded> {
        let identity = try context.requireIdentity()
        guard let declared = request.headers[.contentType], declared.lowercased().hasPrefix("image/") else {
            throw MediaError.invalid(
                field: "Content-Type",
                "Send the image's bytes as the body with Content-Type image/jpeg, image/png or image/webp.")
        }
        let key = try idempotencyKey(request)
        var request = request
        let body = try await request.collectBody(upTo: library.limits.maxBytes)
        let (record, isNew) = try await library.upload(
            Data(body.readableBytesView), owner: identity.userId, campus: identity.campus, idempotencyKey: key)
        return EditedResponse(
            status: isNew ? .created : .ok, headers: [.location: "/v1/media/\(record.id.uuidString.lowercased())"],
            response: Uploaded(
                id: record.id, width: record.width, height: record.height, contentType: record.contentType))
    }

    func read(request: Request, context: ServiceRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let variant = try Self.variant(request.uri.queryParameters.get("size"))
        let record = try await library.image(try Self.id(context), campus: identity.campus)
        let etag = record.etags[variant]!
        var headers: HTTPFields = [.eTag: etag, .cacheControl: Self.cacheControl]
        if let asked = request.headers[.ifNoneMatch], Self.matches(asked, etag) {
            return Response(status: .notModified, headers: headers)
        }
        let bytes = try await library.bytes(of: record, variant: variant)
        headers[.contentType] = record.contentType
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    func delete(request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        try await library.delete(try Self.id(context), owner: try context.requireIdentity().userId)
        return .noContent
    }

    /// The `Idempotency-Key` header, when sent: printable ASCII, at most 200 characters.
    func idempotencyKey(_ request: Request) throws -> String? {
        guard let key = request.headers[.init("Idempotency-Key")!] else { return nil }
        guard (1...200).contains(key.count), key.unicodeScalars.allSatisfy({ (0x21...0x7e).contains($0.value) }) else {
            throw MediaError.invalid(
                field: "Idempotency-Key", "Idempotency-Key is 1 to 200 printable ASCII characters.")
        }
        return key
    }

    static func variant(_ raw: String?) throws -> ImageVariant {
        guard let raw else { return .original }
        guard let variant = ImageVariant(rawValue: raw) else {
            throw MediaError.invalid(field: "size", "size is small, large or original.")
        }
        return variant
    }

    /// The `{id}` path parameter; one that is not a UUID names no image.
    static func id(_ context: ServiceRequestContext) throws -> UUID {
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw MediaError.notFound }
        return id
    }

    /// Whether an `If-None-Match` value (a list of ETags, or `*`) names this ETag; weak ones compare weakly.
    static func matches(_ ifNoneMatch: String, _ etag: String) -> Bool {
        ifNoneMatch.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}
