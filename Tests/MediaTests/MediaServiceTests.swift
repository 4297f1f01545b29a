import Foundation
import Hummingbird
import HummingbirdTesting
import MediaImaging
import TestSupport
import Testing

@testable import Media

/// The real media application on a fresh database and vhost.
struct MediaTestApp: ServiceTestApp {
    let service: TestService

    static func make() async throws -> MediaTestApp {
        MediaTestApp(service: try await TestService.make("media", migrations: ["Services/Media/Storage/Migrations"]))
    }

    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await service.test(buildApplication, body)
    }

    /// How many images and stored variants there are, and the types of the events written.
    func stored() async throws -> (images: Int, blobs: Int, events: [String]) {
        let pool = service.database.pool
        return (
            try await pool.query("SELECT count(*) AS n FROM media WHERE deleted_at IS NULL").first!.decode("n"),
            try await pool.query("SELECT count(*) AS n FROM image_blobs").first!.decode("n"),
            try await pool.query("SELECT type FROM outbox ORDER BY seq").map { try $0.decode("type") }
        )
    }
}

/// An answer: status, headers and body bytes.
struct Answer: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: Data

    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
}

extension TestClientProtocol {
    func send(
        _ method: HTTPRequest.Method, _ path: String, token: String, headers extra: HTTPFields = [:], body: Data? = nil
    ) async throws -> Answer {
        var headers = extra
        headers[.authorization] = "Bearer \(token)"
        return try await execute(uri: path, method: method, headers: headers, body: body.map { ByteBuffer(bytes: $0) })
        {
            Answer(status: $0.status, headers: $0.headers, body: Data($0.body.readableBytesView))
        }
    }

    func upload(_ data: Data, token: String, type: String = "image/jpeg", key: String? = nil) async throws -> Answer {
        var headers: HTTPFields = [.contentType: type]
        if let key { headers[.init("Idempotency-Key")!] = key }
        return try await send(.post, "/v1/media", token: token, headers: headers, body: data)
    }
}

@Suite struct MediaServiceTests {
    @Test func aPhonePhotoIsStoredWithoutExifAndServedInEachSizeWithStrongETags() async throws {
        let app = try await MediaTestApp.make()
        let owner = try await app.token()
        let photo = try ImageProcessorTests.fixture("phone-photo.jpg")
        try await app.test { client in
            let uploaded = try await client.upload(photo, token: owner)
            #expect(uploaded.status == .created)
            #expect(uploaded.json["width"] as? Int == 1600 && uploaded.json["contentType"] as? String == "image/jpeg")
            let id = try #require(uploaded.json["id"] as? String)

            var etags: Set<String> = []
            for (size, width) in [("original", 1600), ("large", 1280), ("small", 320)] {
                let image = try await client.send(.get, "/v1/media/\(id)?size=\(size)", token: owner)
                #expect(image.status == .ok)
                #expect(image.headers[.contentType] == "image/jpeg")
                #expect(image.headers[.cacheControl]?.contains("max-age") == true)
                #expect(image.headers[.init("X-Content-Type-Options")!] == "nosniff")
                #expect(image.body.range(of: Data("Exif".utf8)) == nil)
                #expect(image.body.range(of: Data("Tarrare Test Phone".utf8)) == nil)
                #expect(try ImageProcessor.process(image.body).width == width)
                let etag = try #require(image.headers[.eTag])
                #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))
                etags.insert(etag)

                let again = try await client.send(
                    .get, "/v1/media/\(id)?size=\(size)", token: owner, headers: [.ifNoneMatch: etag])
                #expect(again.status == .notModified && again.body.isEmpty && again.headers[.eTag] == etag)
            }
            #expect(etags.count == 3)
            let stale = try await client.send(
                .get, "/v1/media/\(id)", token: owner, headers: [.ifNoneMatch: "\"0123\""])
            #expect(stale.status == .ok && !stale.body.isEmpty)
        }
        let stored = try await app.stored()
        #expect(stored.images == 1 && stored.blobs == 3 && stored.events == ["media.stored"])
    }

    @Test func eachBadUploadIsAProblemAndStoresNothing() async throws {
        let app = try await MediaTestApp.make()
        let owner = try await app.token()
        let photo = try ImageProcessorTests.fixture("phone-photo.jpg")
        let uploads: [(String, Data, String, HTTPResponse.Status)] = [
            ("a text file named .jpg", Data("just some text, named .jpg".utf8), "image/jpeg", .unsupportedMediaType),
            ("a truncated JPEG", photo.prefix(photo.count / 3), "image/jpeg", .badRequest),
            ("a 9 MB body", photo + Data(count: 9 * 1024 * 1024 - photo.count), "image/jpeg", .contentTooLarge),
            ("a 20,000 × 20,000 PNG", try ImageProcessorTests.fixture("bomb.png"), "image/png", .badRequest),
            ("a photo sent as JSON", photo, "application/json", .badRequest),
        ]
        try await app.test { client in
            for (what, data, type, status) in uploads {
                let answer = try await client.upload(data, token: owner, type: type)
                #expect(answer.status == status, "\(what)")
                #expect(answer.headers[.contentType] == "application/problem+json", "\(what)")
                #expect((answer.json["detail"] as? String)?.isEmpty == false, "\(what)")
            }
        }
        let stored = try await app.stored()
        #expect(stored.images == 0 && stored.blobs == 0 && stored.events.isEmpty)
    }

    @Test func onlyTheOwnersCampusReadsAndOnlyTheOwnerDeletes() async throws {
        let app = try await MediaTestApp.make()
        let (owner, classmate) = (try await app.token(), try await app.token())
        let elsewhere = try await app.token(campus: "aalto.fi")
        try await app.test { client in
            let id = try #require(
                try await client.upload(try ImageProcessorTests.fixture("badge.png"), token: owner, type: "image/png")
                    .json["id"] as? String)
            #expect(try await client.send(.get, "/v1/media/\(id)?size=small", token: classmate).status == .ok)
            let stranger = try await client.send(.get, "/v1/media/\(id)", token: elsewhere)
            #expect(stranger.status == .notFound && stranger.headers[.eTag] == nil)
            #expect(try await client.send(.get, "/v1/media/\(id)?size=huge", token: owner).status == .badRequest)
            #expect(try await client.send(.get, "/v1/media/not-an-id", token: owner).status == .notFound)

            #expect(try await client.send(.delete, "/v1/media/\(id)", token: classmate).status == .notFound)
            #expect(try await client.send(.delete, "/v1/media/\(id)", token: elsewhere).status == .notFound)
            #expect(try await client.send(.delete, "/v1/media/\(id)", token: owner).status == .noContent)
            #expect(try await client.send(.get, "/v1/media/\(id)", token: owner).status == .notFound)
            #expect(try await client.send(.delete, "/v1/media/\(id)", token: owner).status == .notFound)
        }
        let stored = try await app.stored()
        #expect(stored.images == 0 && stored.blobs == 0 && stored.events == ["media.stored", "media.deleted"])
    }

    @Test func aRetriedUploadWithItsIdempotencyKeyAnswersWithTheFirstImage() async throws {
        let app = try await MediaTestApp.make()
        let owner = try await app.token()
        let snack = try ImageProcessorTests.fixture("snack.webp")
        try await app.test { client in
            let first = try await client.upload(snack, token: owner, type: "image/webp", key: "snack-1")
            let retry = try await client.upload(snack, token: owner, type: "image/webp", key: "snack-1")
            #expect(first.status == .created && retry.status == .ok)
            #expect(first.json["id"] as? String == retry.json["id"] as? String)
            #expect(first.json["contentType"] as? String == "image/webp")
            let other = try await client.upload(snack, token: try await app.token(), type: "image/webp", key: "snack-1")
            #expect(other.status == .created && other.json["id"] as? String != first.json["id"] as? String)
        }
        #expect(try await app.stored().images == 2)
    }
}
