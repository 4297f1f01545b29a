import Contracts
import Foundation
import Postgres
import TestSupport
import Testing

@testable import Messaging

/// An event naming two people the way every service's events do.
private struct Met: Event {
    static let type = "people.met"
    struct Member: Codable { var userId: UUID, name: String, bio: String, photoId: UUID? }
    var meetingId: UUID
    var senderId: UUID
    var senderName: String
    var text: String
    var members: [Member]
    var notice: Notice? = nil
    var version: Int64 = 1
    var aggregateId: UUID { meetingId }
}

// NB: the limit guards against a hang, not a speed: with every suite starting at once, a test here has waited
// two and a half minutes for the cores.
@Suite(.timeLimit(.minutes(5))) struct ErasureTests {
    @Test func erasingAPersonFromTheOutboxLeavesNothingThatNamesThemAndEveryoneElseIntact() async throws {
        let database = try await TestDatabase.make(migrations: [PostgresMigrator.messagingDirectory])
        let ada = UUID()
        let bob = UUID()
        let photo = UUID()
        try await database.pool.transaction { connection in
            try Outbox.append(
                Met(
                    meetingId: UUID(), senderId: ada, senderName: "Ada Quill", text: "see you at the library",
                    members: [
                        .init(userId: ada, name: "Ada Quill", bio: "counts in base 7", photoId: photo),
                        .init(userId: bob, name: "Bob Stone", bio: "bakes", photoId: nil),
                    ], notice: Notice(title: "Ada Quill met Bob", body: "at the library")), on: connection)
            try Outbox.append(
                Met(
                    meetingId: UUID(), senderId: bob, senderName: "Bob Stone", text: "bring the notes, Ada",
                    members: [.init(userId: bob, name: "Bob Stone", bio: "bakes", photoId: nil)],
                    notice: Notice(title: "Bob Stone", body: "wrote")), on: connection)
        }
        try await database.pool.transaction { connection in try Outbox.erase(person: ada, on: connection) }

        let payloads = try await database.pool.query("SELECT payload::text AS p FROM outbox ORDER BY seq").map {
            try JSONDecoder().decode(Met.self, from: Data(try $0.decode("p", as: String.self).utf8))
        }
        #expect(payloads.count == 2)
        let first = payloads[0]
        #expect(first.senderName == ErasedPerson.name && first.text.isEmpty)
        #expect(first.members[0].name == ErasedPerson.name && first.members[0].bio.isEmpty)
        #expect(first.members[0].photoId == nil && first.members[0].userId == ada)
        #expect(first.members[1].name == "Bob Stone" && first.members[1].bio == "bakes")
        // A notice may name her in any words: it goes with her.
        #expect(first.notice == nil && payloads[1].notice == Notice(title: "Bob Stone", body: "wrote"))
        // What Bob wrote stays his, even where it mentions her.
        #expect(payloads[1].senderName == "Bob Stone" && payloads[1].text == "bring the notes, Ada")
        let all = try await database.pool.query("SELECT string_agg(payload::text, ' ') AS p FROM outbox").first!
            .decode("p", as: String.self)
        for trace in ["Ada Quill", "base 7", "library", photo.uuidString] { #expect(!all.contains(trace)) }
    }
}
