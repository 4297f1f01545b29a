import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import MediaStorage
import Messaging
import TestSupport
import Testing

@testable import Media

@Suite struct MediaErasureTests {
    @Test func aDeletedAccountsImagesAreGoneEachAnnouncedAndItUploadsNoMore() async throws {
        let app = try await MediaTestApp.make()
        let (ada, bob) = (UUID(), UUID())
        let (adaToken, bobToken) = (try await app.token(ada), try await app.token(bob))
        let badge = try ImageProcessorTests.fixture("badge.png")
        let deleted = UserDeleted(userId: ada, campus: "helsinki.fi")

        try await app.test { client in
            var adas: [String] = []
            for key in ["photo", "listing", "gone"] {
                adas.append(
                    try #require(
                        try await client.upload(badge, token: adaToken, type: "image/png", key: key).json["id"]
                            as? String))
            }
            // One she deleted herself before: announced then, not again.
            #expect(try await client.send(.delete, "/v1/media/\(adas[2])", token: adaToken).status == .noContent)
            let bobs = try #require(
                try await client.upload(badge, token: bobToken, type: "image/png").json["id"] as? String)

            try await app.database.pool.transaction { connection in
                let handled = try AccountEventsConsumer.handlers.apply(deleted, on: connection)
                #expect(handled)
            }

            for id in adas {
                #expect(try await client.send(.get, "/v1/media/\(id)", token: bobToken).status == .notFound)
            }
            #expect(try await client.send(.get, "/v1/media/\(bobs)", token: bobToken).status == .ok)
            let late = try await client.upload(badge, token: adaToken, type: "image/png")
            #expect(late.status == .forbidden && late.json["title"] as? String == "Account deleted")

            let announced = try await app.database.pool.query(
                "SELECT payload::text AS p FROM outbox WHERE type = 'media.deleted' ORDER BY seq"
            ).map { try JSONDecoder().decode(MediaDeleted.self, from: Data(try $0.decode("p", as: String.self).utf8)) }
            #expect(announced.count == 3 && announced.first?.mediaId.uuidString == adas[2].uppercased())
            #expect(Set(announced.map(\.mediaId.uuidString)) == Set(adas.map { $0.uppercased() }))
            #expect(announced.allSatisfy { $0.ownerId == ada })

            for id in adas {
                // Only the events that told other services of the image name it.
                let rows = try await app.database.rowsContaining(id)
                #expect(rows.allSatisfy { $0.hasPrefix("outbox: ") } && !rows.isEmpty, "\(rows)")
            }
            #expect(try await app.database.rowsContaining(bobs).contains { $0.hasPrefix("image_blobs: ") })
        }
        let afterOnce = try await app.database.rowsContaining("")
        try await app.database.pool.transaction { try AccountEventsConsumer.handlers.apply(deleted, on: $0) }
        #expect(try await app.database.rowsContaining("") == afterOnce)
        let stored = try await app.stored()
        #expect(stored.images == 1 && stored.blobs == 3)
        // Her id stays only where media remembers that she is gone and in the events that told of her images.
        #expect(
            try await app.database.rowsContaining(ada.uuidString).allSatisfy {
                $0.hasPrefix("outbox: ") || $0.hasPrefix("erased_owners: ")
            })
    }
}
