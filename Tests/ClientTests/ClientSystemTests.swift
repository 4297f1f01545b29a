import Foundation
import TarrareClient
import Testing

/// The package against the running system (scripts/up), as an app would use it: scripts/test runs these after it
/// starts the system, and the other Swift tests without them.
@Suite(.serialized) struct ClientSystemTests {
    @Test func aWholeDeliveryThroughThePackageAlone() async throws {
        let aino = try await System.student("Aino")
        let olli = try await System.student("Olli")
        _ = try await aino.call { try await aino.api.patchMe(body: .json(.init(mode: .delivering))).ok }
        let ainoFeed = FeedRecorder(aino.feed())
        let olliFeed = FeedRecorder(olli.feed())
        defer {
            ainoFeed.stop()
            olliFeed.stop()
        }

        // A building to deliver to, and a restaurant near it where nobody else is checked in.
        let porthania = try await olli.call {
            try await olli.api.getPlaces(query: .init(q: "porthania", kind: .building, limit: 1)).ok.body.json.places
        }.first
        let building = try #require(porthania)
        let nearby = try await aino.call {
            try await aino.api.getPlacesNearby(
                query: .init(lat: building.latitude, lon: building.longitude, radius: 600, kind: .restaurant, limit: 50)
            ).ok.body.json.places
        }
        let busy = try await aino.call { try await aino.api.getRestaurants().ok.body.json.restaurants }
            .map(\.restaurant.id)
        let restaurant = try #require(nearby.first { !busy.contains($0.id) })

        // Check in, order, and the offer heard on the deliverer's feed, accepted.
        let run = try await whenKnown("Aino's check-in") {
            try await aino.call {
                try await aino.api.postRuns(
                    body: .json(.init(restaurantId: restaurant.id, destinationId: building.id))
                ).created.body.json
            }
        }
        defer { Task { _ = try? await aino.api.deleteRunsById(path: .init(id: run.id)) } }
        let order = try await whenKnown("Olli's order") {
            try await olli.call {
                try await olli.api.postOrders(
                    body: .json(
                        .init(restaurantId: restaurant.id, destinationId: building.id, items: "Lunch of the day"))
                ).created.body.json
            }
        }
        let offer = try await ainoFeed.entry("offer.made", where: "orderId", is: order.id)
        struct Offered: Decodable { var offerId: String }
        let match = try await aino.call {
            try await aino.api.postOffersByIdAccept(path: .init(id: offer.decode(Offered.self).offerId)).ok.body.json
        }
        _ = try await olliFeed.entry("match.accepted", where: "match.matchId", is: match.id)

        // They chat, each hearing the other on the feed; a send repeated with its id is the same message.
        let id = UUID()
        let first = try await aino.send("Your lunch is on its way", to: match.id, id: id)
        let again = try await aino.send("Your lunch is on its way", to: match.id, id: id)
        #expect(first.id == again.id)
        _ = try await olliFeed.entry("message.sent", where: "text", is: "Your lunch is on its way")
        try await olli.send("Kiitos! Second floor lobby", to: match.id)
        _ = try await ainoFeed.entry("message.sent", where: "text", is: "Kiitos! Second floor lobby")
        let messages = try await olli.call {
            try await olli.api.getConversationsByIdMessages(path: .init(id: match.id)).ok.body.json.messages
        }
        // NB: the newest first.
        #expect(messages.map(\.text) == ["Kiitos! Second floor lobby", "Your lunch is on its way"])

        // Both mark it complete.
        for student in [olli, aino] {
            _ = try await student.call { try await student.api.postMatchesByIdComplete(path: .init(id: match.id)).ok }
        }
        _ = try await olliFeed.entry("match.completed", where: "match.matchId", is: match.id)
        // Each feed went live and yielded every seq once, in order.
        for feed in [ainoFeed, olliFeed] {
            #expect(feed.states.first == .catchingUp(after: 0))
            #expect(feed.states.contains(.live))
            #expect(feed.entries.map(\.seq) == Array(1...Int64(feed.entries.count)))
        }
    }

    @Test func aTutoringMatchThroughThePackageAlone() async throws {
        let sofia = try await System.student("Sofia")
        let tomas = try await System.student("Tomas")
        let sofiaFeed = FeedRecorder(sofia.feed())
        defer { sofiaFeed.stop() }
        let matchId = try await Self.matched(sofia, tomas)
        _ = try await sofiaFeed.entry("tutoring.matched", where: "matchId", is: matchId)
        try await tomas.send("Shall we meet on Thursday?", to: matchId)
        _ = try await sofiaFeed.entry("message.sent", where: "text", is: "Shall we meet on Thursday?")
        // Her phone registers for pushes of what comes while the app is closed.
        let device = try await sofia.registerDevice(.apns, token: String(repeating: "5e", count: 32))
        let devices = try await sofia.call { try await sofia.api.getDevices().ok.body.json.devices }
        #expect(devices.map(\.id) == [device])
    }

    @Test func theFeedCarriesOnAcrossARestartOfNotificationsWithoutAGapOrARepeat() async throws {
        let sofia = try await System.student("Sofia")
        let tomas = try await System.student("Tomas")
        let matchId = try await Self.matched(sofia, tomas)
        let feed = FeedRecorder(sofia.feed())
        defer { feed.stop() }
        _ = try await eventually("Sofia's feed live") { feed.states.contains(.live) ? true : nil }
        let texts = (1...6).map { "Message \($0) of six" }
        for text in texts.prefix(3) {
            try await tomas.send(text, to: matchId)
            _ = try await feed.entry("message.sent", where: "text", is: text)
        }

        try await System.restart("notifications")
        // Sent while the feed reconnects: kept, and replayed once it is back.
        for text in texts.suffix(3) { try await tomas.send(text, to: matchId) }
        for text in texts.suffix(3) { _ = try await feed.entry("message.sent", where: "text", is: text, seconds: 60) }

        let states = feed.states
        let reconnected = try #require(states.firstIndex { if case .reconnecting = $0 { true } else { false } })
        #expect(states[..<reconnected].contains(.live))
        #expect(states[reconnected...].contains(.live), "\(states)")
        #expect(feed.entries.map(\.seq) == Array(1...Int64(feed.entries.count)))
        struct Sent: Decodable { var text: String }
        let heard = try feed.entries.filter { $0.type == "message.sent" }.map { try $0.decode(Sent.self).text }
        #expect(heard == texts)
    }

    @Test func manyCallsThatFindTheTokenRefusedShareOneRefresh() async throws {
        let aino = try await System.student("Aino")
        let held = try #require(try await aino.session.current())
        // The same session on another device whose access token the server refuses (its signature is not the
        // server's): every call finds it stale at once. Two refreshes would spend the refresh token twice, which
        // revokes the whole session.
        let refused =
            String(held.accessToken.dropLast(6)) + (held.accessToken.hasSuffix("AAAAAA") ? "BBBBBB" : "AAAAAA")
        let transport = CountingTransport()
        let device = TarrareClient(
            serverURL: System.gateway,
            tokens: MemoryTokenStore(
                Tokens(accessToken: refused, refreshToken: held.refreshToken, userId: held.userId)),
            transport: transport)
        let names = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask { try await device.call { try await device.api.getMe().ok.body.json.name } }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(names == Array(repeating: "Aino", count: 8))
        #expect(transport.count(of: "/v1/auth/refresh") == 1)
        #expect(try await device.session.current()?.accessToken != refused)
    }

    @Test func aRefreshTokenTheServerRefusesSignsTheStudentOut() async throws {
        let aino = try await System.student("Aino")
        let held = try #require(try await aino.session.current())
        try await aino.signOut()
        // The tokens of a session that ended: the refresh is refused, and the device is signed out.
        let device = TarrareClient(
            serverURL: System.gateway,
            tokens: MemoryTokenStore(
                Tokens(accessToken: "not.a.token", refreshToken: held.refreshToken, userId: held.userId)))
        let signedOut = SignedOut()
        await device.session.onSignedOut { signedOut.happened() }
        await #expect(throws: TarrareError.signedOut) { try await device.call { try await device.api.getMe() } }
        #expect(try await device.session.current() == nil)
        #expect(signedOut.count == 1)
    }

    /// Sofia (a student) and Tomas (a tutor) of a course of their own, who like each other's cards: their match.
    static func matched(_ sofia: TarrareClient, _ tomas: TarrareClient) async throws -> String {
        let course = "CLIENT-\(UUID().uuidString.prefix(6))"
        for (student, role) in [(sofia, "student"), (tomas, "tutor")] {
            _ = try await student.call {
                try await student.api.putTutoringProfile(
                    body: .json(.init(role: .init(rawValue: role)!, courses: [course]))
                ).ok
            }
        }
        let sofiaId = try #require(try await sofia.session.current()?.userId)
        let tomasId = try #require(try await tomas.session.current()?.userId)
        // Each finds the other's card and likes it: the second like is the match.
        let card = try await eventually("Tomas's card in Sofia's feed") {
            try await sofia.call { try await sofia.api.getTutoringFeed().ok.body.json.cards }
                .first { $0.userId == tomasId }
        }
        _ = try await sofia.call {
            try await sofia.api.postTutoringSwipes(body: .json(.init(userId: card.userId, like: true))).created
        }
        let liked = try await whenKnown("Tomas's like") {
            try await tomas.call {
                try await tomas.api.postTutoringSwipes(body: .json(.init(userId: sofiaId, like: true))).created.body
                    .json
            }
        }
        return try #require(liked.matchId)
    }
}
