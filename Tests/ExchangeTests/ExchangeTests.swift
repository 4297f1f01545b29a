import Contracts
import Foundation
import Hummingbird
import HummingbirdTesting
import MatchingTestSupport
import Postgres
import ServiceKit
import TestSupport
import Testing

@testable import Exchange
@testable import MatchingCore

@Suite struct ExchangeRulesTests {
    @Test func offeredIsOneToTwoHundredCharactersOnOneLine() throws {
        #expect(try ExchangeRules.offered("  Fazer Sininen ") == "Fazer Sininen")
        #expect(try ExchangeRules.offered(String(repeating: "ä", count: 200)).count == 200)
        for bad in ["", "   ", String(repeating: "x", count: 201), "two\nlines"] {
            #expect(throws: MatchingError.self) { try ExchangeRules.offered(bad) }
        }
    }

    @Test func wantedHasAtMostTenShortItemsWithoutRepeats() throws {
        #expect(try ExchangeRules.wanted(nil) == [])
        #expect(try ExchangeRules.wanted(["Pulla", " pulla ", "Kahvi"]) == ["Pulla", "Kahvi"])
        #expect(throws: MatchingError.self) { try ExchangeRules.wanted((0..<11).map { "Snack \($0)" }) }
        #expect(throws: MatchingError.self) { try ExchangeRules.wanted([""]) }
        #expect(throws: MatchingError.self) { try ExchangeRules.wanted([String(repeating: "x", count: 61)]) }
    }

    @Test func aCategoryIsOneOfFive() throws {
        #expect(try ExchangeRules.category("drink") == .drink)
        #expect(throws: MatchingError.self) { try ExchangeRules.category("Sweet") }
        #expect(throws: MatchingError.self) { try ExchangeRules.category("spicy") }
    }

    @Test func aPlaceIsAPointOrAPlaceIdNeverBothOrNeither() throws {
        let placeId = UUID()

        #expect(
            try ExchangeRules.place(lat: 60.17, lon: 24.95, placeId: nil) == .point(GeoPoint(lat: 60.17, lon: 24.95)))
        #expect(try ExchangeRules.place(lat: nil, lon: nil, placeId: placeId) == .place(placeId))
        #expect(throws: MatchingError.self) { try ExchangeRules.place(lat: 60.17, lon: 24.95, placeId: placeId) }
        #expect(throws: MatchingError.self) { try ExchangeRules.place(lat: 60.17, lon: nil, placeId: nil) }
        #expect(throws: MatchingError.self) { try ExchangeRules.place(lat: 91, lon: 24.95, placeId: nil) }
        #expect(throws: MatchingError.self) { try ExchangeRules.place(lat: 60.17, lon: .infinity, placeId: nil) }
    }

    @Test func aCursorReadsBackWhatItWroteAndRefusesAnythingElse() throws {
        let cursors = [
            ListingCursor(order: .newest, createdAtMicroseconds: 1_790_000_000_123_456, id: UUID()),
            ListingCursor(order: .nearest, rank: 123.456789012345, createdAtMicroseconds: 1, id: UUID()),
        ]

        for cursor in cursors {
            #expect(try ListingCursor(cursor.text) == cursor)
            #expect(!cursor.text.contains("|") && !cursor.text.contains("="))
        }
        for bad in ["nonsense", "", "bnwxMnwzfHg", Data("x|1|2|\(UUID())".utf8).base64EncodedString()] {
            #expect(throws: Problem.self) { try ListingCursor(bad) }
        }
    }

    @Test func theChatSubjectSaysWhatIsSwappedForWhat() {
        #expect(
            ExchangeRules.subject(offered: "Fazer Sininen", offering: "Karl Fazer bars", wanted: ["Pulla"])
                == "Fazer Sininen for Karl Fazer bars")
        #expect(
            ExchangeRules.subject(offered: "Pulla", offering: nil, wanted: ["Kahvi", "Tee", "Mehu"])
                == "Pulla for Kahvi or Tee")
        #expect(ExchangeRules.subject(offered: "Pulla", offering: nil, wanted: []) == "Pulla")
    }

    @Test func anEditChangesOnlyWhatItNamesAndAnEmptyNoteRemovesTheNote() {
        let draft = ListingDraft(
            offered: "Pulla", wanted: ["Kahvi"], category: .sweet, place: .point(GeoPoint(lat: 60.17, lon: 24.95)),
            photoId: nil, note: "Fresh today")

        let edited = ListingEdit(offered: "Korvapuusti", note: "").applied(to: draft)

        #expect(edited.offered == "Korvapuusti" && edited.wanted == ["Kahvi"] && edited.category == .sweet)
        #expect(edited.note == nil && edited.place == draft.place)
    }

    @Test func aBrowseIsNearestFirstNearAPointAndOtherwiseNewestFirst() {
        #expect(ListingQuery().order == .newest)
        #expect(ListingQuery(text: "fazer").order == .newest)
        #expect(ListingQuery(text: "fazer", near: GeoPoint(lat: 60, lon: 24)).order == .nearest)
    }
}

/// The exchange flow on real PostgreSQL (with PostGIS, pg_trgm and unaccent) through the matching application's
/// routes.
@Suite struct ExchangeTests {
    /// An owner of snacks, two students who would take them, and a student of another campus.
    struct Cast {
        let owner = Identity.student("Olli")
        let taker = Identity.student("Taru")
        let other = Identity.student("Ville")
        let elsewhere = Identity.student("Otto", campus: "aalto.fi")

        var everyone: [Identity] { [owner, taker, other, elsewhere] }
    }

    func withCast(
        _ body: @escaping @Sendable (MatchingTestApp, Cast, [UUID: String], any TestClientProtocol) async throws -> Void
    ) async throws {
        let app = try await MatchingTestApp.make()
        let cast = Cast()
        var tokens: [UUID: String] = [:]
        for caller in cast.everyone {
            tokens[caller.userId] = try await app.token(for: caller)
        }
        let allTokens = tokens
        try await app.test { client in try await body(app, cast, allTokens, client) }
    }

    func listing(
        _ offered: String, wanted: [String] = [], category: String = "sweet",
        place: [String: Any] = ["lat": 60.17008, "lon": 24.94891]
    ) -> [String: Any] {
        ["offered": offered, "wanted": wanted, "category": category, "place": place]
    }

    /// Lists `body` as the token's owner; returns the listing's id.
    func create(_ client: any TestClientProtocol, _ token: String, _ body: [String: Any]) async throws -> UUID {
        let (status, answer) = try await client.call(.post, "/v1/listings", token: token, body: body)
        guard status == .created, let id = (answer["id"] as? String).flatMap(UUID.init(uuidString:)) else {
            throw TestFailure("creating a listing answered \(status): \(answer)")
        }
        return id
    }

    func browse(_ client: any TestClientProtocol, _ token: String, _ query: String) async throws -> [[String: Any]] {
        let (status, page) = try await client.call(.get, "/v1/listings\(query)", token: token)
        guard status == .ok else { throw TestFailure("browsing \(query) answered \(status): \(page)") }
        return page["listings"] as? [[String: Any]] ?? []
    }

    func offered(_ listings: [[String: Any]]) -> [String] {
        listings.compactMap { $0["offered"] as? String }
    }

    func recipients(_ payload: [String: Any]) -> Set<UUID> {
        Set((payload["recipients"] as? [String] ?? []).compactMap(UUID.init(uuidString:)))
    }

    /// Whether an event's payload names `userId` anywhere.
    func mentions(_ payload: [String: Any], _ userId: UUID) -> Bool {
        let text = (try? JSONSerialization.data(withJSONObject: payload)).map { String(decoding: $0, as: UTF8.self) }
        return text?.lowercased().contains(userId.uuidString.lowercased()) ?? false
    }

    func countListings(_ app: MatchingTestApp) async throws -> Int {
        try await app.database.pool.query("SELECT count(*)::int AS n FROM exchange_listings").first!.decode("n")
    }

    @Test func searchFindsListingsDespiteTyposPrefixesAndAccents() async throws {
        try await withCast { _, cast, tokens, client in
            let token = tokens[cast.owner.userId]!
            for body in [
                listing("Fazer Sininen", wanted: ["Karl Fazer bars"]),
                listing("Paulig Juhla Mokka", wanted: ["Täyspaahto kahvi"], category: "drink"),
                listing("Salmiakki", wanted: ["Lakritsi"], category: "salty"),
                listing("Omena", wanted: ["Mustikkapiirakka", "Banaani"], category: "healthy"),
            ] {
                _ = try await create(client, token, body)
            }
            let browser = tokens[cast.taker.userId]!

            let typo = try await browse(client, browser, "?q=fazr")
            let accentless = try await browse(client, browser, "?q=taysp")
            let prefix = try await browse(client, browser, "?q=sal")
            let wantedItem = try await browse(client, browser, "?q=MUSTIKKA")
            let twoWords = try await browse(client, browser, "?q=fazer%20SINI")
            let unknownWord = try await browse(client, browser, "?q=fazer%20xyzzy")
            let drinks = try await browse(client, browser, "?category=drink")
            let nothing = try await browse(client, browser, "?q=fazr&category=salty")

            #expect(offered(typo) == ["Fazer Sininen"])
            #expect(offered(accentless) == ["Paulig Juhla Mokka"])
            #expect(offered(prefix) == ["Salmiakki"])
            #expect(offered(wantedItem) == ["Omena"])
            #expect(offered(twoWords) == ["Fazer Sininen"] && unknownWord.isEmpty)
            #expect(offered(drinks) == ["Paulig Juhla Mokka"])
            #expect(nothing.isEmpty)
            #expect(typo.first?["wanted"] as? [String] == ["Karl Fazer bars"])
            #expect((typo.first?["owner"] as? [String: Any])?["name"] as? String == "Olli")
        }
    }

    @Test func nearbyListsNearestFirstWithDistancesAndAPlaceGivesItsPoint() async throws {
        try await withCast { _, cast, tokens, client in
            let token = tokens[cast.owner.userId]!
            // Metsätalo is 285 m from Porthania; Kallion kirjasto about 1.6 km.
            _ = try await create(
                client, token, listing("Far", place: ["placeId": MatchingTestApp.farBuilding.placeId.uuidString]))
            _ = try await create(
                client, token, listing("Middle", place: ["placeId": MatchingTestApp.metsatalo.placeId.uuidString]))
            let nearest = try await create(
                client, token, listing("Near", place: ["placeId": MatchingTestApp.porthania.placeId.uuidString]))
            let here = "\(MatchingTestApp.porthania.latitude),\(MatchingTestApp.porthania.longitude)"

            let within = try await browse(client, token, "?near=\(here)&radius=1000")
            let wide = try await browse(client, token, "?near=\(here)&radius=5000")
            let newest = try await browse(client, token, "")
            let (_, one) = try await client.call(.get, "/v1/listings/\(nearest)", token: tokens[cast.taker.userId]!)

            #expect(offered(within) == ["Near", "Middle"])
            #expect(offered(wide) == ["Near", "Middle", "Far"])
            let distances = wide.compactMap { $0["distanceMeters"] as? Double }
            #expect(distances.count == 3 && distances == distances.sorted())
            #expect(distances[0] < 1 && abs(distances[1] - 285) < 10 && distances[2] > 1400)
            #expect(newest.allSatisfy { $0["distanceMeters"] == nil })
            #expect(offered(newest) == ["Near", "Middle", "Far"])
            let place = one["place"] as? [String: Any] ?? [:]
            #expect(
                place["name"] as? String == "Porthania" && place["lat"] as? Double == MatchingTestApp.porthania.latitude
            )
        }
    }

    @Test func nearbyPagesKeepEveryListingOfAPlaceWhoseDistancesTie() async throws {
        try await withCast { _, cast, tokens, client in
            let token = tokens[cast.owner.userId]!
            for index in 0..<5 {
                _ = try await create(
                    client, token,
                    listing("At Porthania \(index)", place: ["placeId": MatchingTestApp.porthania.placeId.uuidString]))
            }
            _ = try await create(
                client, token, listing("At Metsätalo", place: ["placeId": MatchingTestApp.metsatalo.placeId.uuidString])
            )
            let here = "\(MatchingTestApp.unicafe.latitude),\(MatchingTestApp.unicafe.longitude)"

            var pages: [[[String: Any]]] = []
            var after: String?
            repeat {
                let query = "?near=\(here)&radius=1000&limit=2" + (after.map { "&after=\($0)" } ?? "")
                let (_, page) = try await client.call(.get, "/v1/listings\(query)", token: tokens[cast.taker.userId]!)
                pages.append(page["listings"] as? [[String: Any]] ?? [])
                after = page["next"] as? String
            } while after != nil && pages.count < 10
            let seen = pages.flatMap { $0 }
            let distances = seen.compactMap { $0["distanceMeters"] as? Double }

            #expect(pages.count == 3)
            #expect(Set(offered(seen)).count == 6 && offered(seen).last == "At Metsätalo")
            #expect(distances.count == 6 && distances == distances.sorted())
        }
    }

    @Test func pagesFollowTheCursorWithoutRepeatsAndMineShowsEveryStatus() async throws {
        try await withCast { _, cast, tokens, client in
            let token = tokens[cast.owner.userId]!
            var ids: [UUID] = []
            for index in 0..<5 {
                ids.append(try await create(client, token, listing("Pulla \(index)")))
            }
            _ = try await client.call(.delete, "/v1/listings/\(ids[0])", token: token)

            var seen: [String] = []
            var after: String?
            repeat {
                let query = "?limit=2" + (after.map { "&after=\($0)" } ?? "")
                let (_, page) = try await client.call(.get, "/v1/listings\(query)", token: tokens[cast.taker.userId]!)
                seen += offered(page["listings"] as? [[String: Any]] ?? [])
                after = page["next"] as? String
            } while after != nil
            let mine = try await browse(client, token, "?mine=true")
            let theirs = try await browse(client, tokens[cast.taker.userId]!, "?mine=true")
            let (wrongOrder, _) = try await client.call(
                .get,
                "/v1/listings?near=60.17,24.95&after=\(ListingCursor(order: .newest, createdAtMicroseconds: 0, id: UUID()).text)",
                token: token)

            #expect(seen == ["Pulla 4", "Pulla 3", "Pulla 2", "Pulla 1"])
            #expect(offered(mine) == ["Pulla 4", "Pulla 3", "Pulla 2", "Pulla 1", "Pulla 0"])
            #expect(mine.last?["status"] as? String == "withdrawn")
            #expect(theirs.isEmpty)
            #expect(wrongOrder == .badRequest)
        }
    }

    @Test func twentyConcurrentAgreesMakeExactlyOneExchange() async throws {
        let app = try await MatchingTestApp.make()
        let repository = try app.steps
        let owner = Identity.student("Olli")
        let listing = try await repository.createListing(
            id: nil,
            ListingDraft(
                offered: "Fazer Sininen", wanted: [], category: .sweet, place: .point(GeoPoint(lat: 60.17, lon: 24.95)),
                photoId: nil, note: nil),
            caller: owner)
        let takers = (0..<20).map { Identity.student("Taker \($0)") }

        let outcomes = await race(takers, won: "agreed") { taker in
            _ = try await repository.agree(to: listing.id, offering: "Karl Fazer bars", caller: taker)
        }
        let exchanges = try await app.database.pool.query("SELECT count(*)::int AS n FROM exchanges").first!.decode(
            "n", as: Int.self)
        let events = try await app.events()

        #expect(outcomes.filter { $0 == "agreed" }.count == 1)
        #expect(outcomes.filter { $0 == "conflict" }.count == 19)
        #expect(exchanges == 1)
        #expect(try await repository.listing(listing.id, caller: owner)?.status == .inProgress)
        let agreed = events.filter { $0.type == ExchangeAgreed.type }
        #expect(agreed.count == 1 && agreed.first.map { recipients($0.payload) } == [owner.userId])
        let opened = events.filter { $0.type == MatchOpened.type }
        #expect(opened.count == 1)
        #expect(opened.first?.payload["flow"] as? String == "exchange")
        #expect(opened.first?.payload["subject"] as? String == "Fazer Sininen for Karl Fazer bars")
    }

    @Test func cancellingReopensTheListingClosesTheChatAndTellsTheOther() async throws {
        try await withCast { app, cast, tokens, client in
            let (owner, taker) = (tokens[cast.owner.userId]!, tokens[cast.taker.userId]!)
            let listingId = try await create(client, owner, listing("Geisha", wanted: ["Dumle"]))
            let (agreed, exchange) = try await client.call(.post, "/v1/listings/\(listingId)/agree", token: taker)
            let exchangeId = try #require((exchange["id"] as? String).flatMap(UUID.init(uuidString:)))
            let (retry, again) = try await client.call(.post, "/v1/listings/\(listingId)/agree", token: taker)
            let (late, _) = try await client.call(
                .post, "/v1/listings/\(listingId)/agree", token: tokens[cast.other.userId]!)
            let (own, problem) = try await client.call(.post, "/v1/listings/\(listingId)/agree", token: owner)
            let (_, taken) = try await client.call(.get, "/v1/listings/\(listingId)", token: owner)
            let (stranger, _) = try await client.call(
                .get, "/v1/exchanges/\(exchangeId)", token: tokens[cast.other.userId]!)
            let opened = try await app.events()

            #expect(agreed == .created && exchange["status"] as? String == "in_progress")
            #expect(exchange["offering"] == nil && exchange["offered"] as? String == "Geisha")
            #expect(retry == .created && again["id"] as? String == exchange["id"] as? String)
            #expect(late == .conflict && own == .conflict && problem["status"] as? Int == 409)
            #expect(
                taken["status"] as? String == "in_progress"
                    && taken["exchangeId"] as? String == exchange["id"] as? String)
            #expect(stranger == .notFound)
            #expect(opened.first { $0.type == MatchOpened.type }?.payload["subject"] as? String == "Geisha for Dumle")

            let (cancelled, answer) = try await client.call(.post, "/v1/exchanges/\(exchangeId)/cancel", token: taker)
            let (twice, _) = try await client.call(.post, "/v1/exchanges/\(exchangeId)/cancel", token: owner)
            let (_, reopened) = try await client.call(.get, "/v1/listings/\(listingId)", token: owner)
            let closed = try await app.events().dropFirst(opened.count)

            #expect(cancelled == .ok && answer["status"] as? String == "cancelled")
            #expect(twice == .conflict)
            #expect(reopened["status"] as? String == "active" && reopened["exchangeId"] == nil)
            #expect(closed.map(\.type) == [ExchangeCancelled.type, MatchClosed.type])
            #expect(closed.first.map { recipients($0.payload) } == [cast.owner.userId])
            #expect(closed.last?.payload["reason"] as? String == "cancelled")
            #expect(closed.last?.payload["matchId"] as? String == exchange["id"] as? String)
            let (agreedAgain, _) = try await client.call(
                .post, "/v1/listings/\(listingId)/agree", token: tokens[cast.other.userId]!,
                body: ["offering": "Pätkis"])
            #expect(agreedAgain == .created)
        }
    }

    @Test func bothCompletingExchangesItAndEachReviewsOnceIntoTheOwnersRating() async throws {
        try await withCast { app, cast, tokens, client in
            let (owner, taker) = (tokens[cast.owner.userId]!, tokens[cast.taker.userId]!)
            let listingId = try await create(client, owner, listing("Korvapuusti"))
            let (_, exchange) = try await client.call(
                .post, "/v1/listings/\(listingId)/agree", token: taker, body: ["offering": "Kaurakeksi"])
            let exchangeId = try #require(exchange["id"] as? String)

            let (early, _) = try await client.call(
                .post, "/v1/exchanges/\(exchangeId)/review", token: taker, body: ["stars": 5])
            let (_, half) = try await client.call(.post, "/v1/exchanges/\(exchangeId)/complete", token: owner)
            let (_, halfAgain) = try await client.call(.post, "/v1/exchanges/\(exchangeId)/complete", token: owner)
            let (_, done) = try await client.call(.post, "/v1/exchanges/\(exchangeId)/complete", token: taker)
            let (_, swapped) = try await client.call(.get, "/v1/listings/\(listingId)", token: owner)
            let events = try await app.events()

            #expect(early == .conflict)
            #expect(
                half["status"] as? String == "in_progress"
                    && (half["owner"] as? [String: Any])?["completed"] as? Bool == true)
            #expect(halfAgain["status"] as? String == "in_progress")
            #expect(done["status"] as? String == "exchanged")
            #expect(swapped["status"] as? String == "exchanged")
            let completed = try #require(events.first { $0.type == ExchangeCompleted.type })
            #expect(recipients(completed.payload) == [cast.owner.userId, cast.taker.userId])
            #expect(events.filter { $0.type == ExchangeCompleted.type }.count == 1)
            #expect(events.last?.type == MatchClosed.type && events.last?.payload["reason"] as? String == "completed")

            let (reviewed, review) = try await client.call(
                .post, "/v1/exchanges/\(exchangeId)/review", token: taker, body: ["stars": 5, "text": "Still warm!"])
            let (second, _) = try await client.call(
                .post, "/v1/exchanges/\(exchangeId)/review", token: taker, body: ["stars": 1])
            let (back, _) = try await client.call(
                .post, "/v1/exchanges/\(exchangeId)/review", token: owner, body: ["stars": 4])
            let (outsider, _) = try await client.call(
                .post, "/v1/exchanges/\(exchangeId)/review", token: tokens[cast.other.userId]!, body: ["stars": 1])
            let (badStars, problem) = try await client.call(
                .post, "/v1/exchanges/\(exchangeId)/review", token: owner, body: ["stars": 6])
            _ = try await create(client, owner, listing("Pulla"))
            let shown = try await browse(client, tokens[cast.other.userId]!, "")
            let (_, final) = try await client.call(.get, "/v1/exchanges/\(exchangeId)", token: owner)

            #expect(
                reviewed == .created && review["stars"] as? Int == 5
                    && review["revieweeId"] as? String == cast.owner.userId.uuidString)
            #expect(second == .conflict && back == .created && outsider == .notFound)
            #expect(badStars == .badRequest && problem["field"] as? String == "stars")
            let ownerBlock = try #require(shown.first?["owner"] as? [String: Any])
            #expect(ownerBlock["rating"] as? Double == 5 && ownerBlock["reviews"] as? Int == 1)
            #expect(
                ownerBlock["id"] as? String == cast.owner.userId.uuidString && ownerBlock["name"] as? String == "Olli")
            #expect((final["owner"] as? [String: Any])?["reviewed"] as? Bool == true)
            #expect((final["taker"] as? [String: Any])?["reviewed"] as? Bool == true)
        }
    }

    @Test func onlyTheOwnerEditsOrWithdrawsAndOnlyWhileActive() async throws {
        try await withCast { _, cast, tokens, client in
            let (owner, other) = (tokens[cast.owner.userId]!, tokens[cast.other.userId]!)
            let listingId = try await create(client, owner, listing("Tupla"))

            let (notTheirs, _) = try await client.call(
                .patch, "/v1/listings/\(listingId)", token: other, body: ["offered": "Mine now"])
            let (notTheirsToWithdraw, _) = try await client.call(.delete, "/v1/listings/\(listingId)", token: other)
            let (edited, listing) = try await client.call(
                .patch, "/v1/listings/\(listingId)", token: owner,
                body: ["offered": "Tupla Maxi", "wanted": ["Kismet"], "category": "other", "note": "By the door"])
            let found = try await browse(client, other, "?q=kismet")
            let (withdrawn, answer) = try await client.call(.delete, "/v1/listings/\(listingId)", token: owner)
            let (again, _) = try await client.call(.delete, "/v1/listings/\(listingId)", token: owner)
            let (late, _) = try await client.call(.patch, "/v1/listings/\(listingId)", token: owner, body: ["note": ""])
            let (hidden, _) = try await client.call(.get, "/v1/listings/\(listingId)", token: other)
            let (goneForOwner, _) = try await client.call(.get, "/v1/listings/\(listingId)", token: owner)
            let ownList = try await browse(client, owner, "?mine=true")

            #expect(notTheirs == .notFound && notTheirsToWithdraw == .notFound)
            #expect(
                edited == .ok && listing["offered"] as? String == "Tupla Maxi"
                    && listing["category"] as? String == "other")
            #expect(listing["note"] as? String == "By the door")
            #expect(offered(found) == ["Tupla Maxi"])
            #expect(withdrawn == .ok && answer["status"] as? String == "withdrawn")
            #expect(again == .conflict && late == .conflict)
            #expect(hidden == .notFound && goneForOwner == .notFound)
            #expect(ownList.first?["status"] as? String == "withdrawn")
        }
    }

    @Test func anotherCampusNeitherSeesNorChangesAnythingAndIsNamedByNoEvent() async throws {
        try await withCast { app, cast, tokens, client in
            let elsewhere = tokens[cast.elsewhere.userId]!
            let (owner, taker) = (tokens[cast.owner.userId]!, tokens[cast.taker.userId]!)
            let listingId = try await create(client, owner, listing("Pätkis"))
            let takenId = try await create(client, owner, listing("Tupla"))
            let (_, exchange) = try await client.call(.post, "/v1/listings/\(takenId)/agree", token: taker)
            let exchangeId = try #require(exchange["id"] as? String)
            let otaniemi = "60.186,24.828"

            let (seen, _) = try await client.call(.get, "/v1/listings/\(listingId)", token: elsewhere)
            let (agreed, _) = try await client.call(.post, "/v1/listings/\(listingId)/agree", token: elsewhere)
            let (edited, _) = try await client.call(
                .patch, "/v1/listings/\(listingId)", token: elsewhere, body: ["offered": "Mine now"])
            let (withdrawn, _) = try await client.call(.delete, "/v1/listings/\(listingId)", token: elsewhere)
            var actions: [HTTPResponse.Status] = []
            for action in ["cancel", "complete"] {
                actions.append(
                    try await client.call(.post, "/v1/exchanges/\(exchangeId)/\(action)", token: elsewhere).0)
            }
            let (reviewed, _) = try await client.call(
                .post, "/v1/exchanges/\(exchangeId)/review", token: elsewhere, body: ["stars": 1])
            let (exchangeSeen, _) = try await client.call(.get, "/v1/exchanges/\(exchangeId)", token: elsewhere)
            let browsed = try await browse(client, elsewhere, "")
            let searched = try await browse(client, elsewhere, "?q=patkis")
            let nearby = try await browse(client, elsewhere, "?near=\(otaniemi)&radius=50000")
            let mine = try await browse(client, elsewhere, "?mine=true")
            let (placeElsewhere, problem) = try await client.call(
                .post, "/v1/listings", token: elsewhere,
                body: listing("Jaffa", place: ["placeId": MatchingTestApp.porthania.placeId.uuidString]))
            let (_, untouched) = try await client.call(.get, "/v1/listings/\(listingId)", token: owner)
            let (_, exchangeAfter) = try await client.call(.get, "/v1/exchanges/\(exchangeId)", token: owner)

            #expect(seen == .notFound && agreed == .notFound && edited == .notFound && withdrawn == .notFound)
            #expect(actions == [.notFound, .notFound] && reviewed == .notFound && exchangeSeen == .notFound)
            #expect(browsed.isEmpty && searched.isEmpty && nearby.isEmpty && mine.isEmpty)
            #expect(placeElsewhere == .notFound && problem["detail"] as? String == "No such place.")
            #expect(untouched["offered"] as? String == "Pätkis" && untouched["status"] as? String == "active")
            #expect(exchangeAfter["status"] as? String == "in_progress")
            for event in try await app.events() {
                #expect(!recipients(event.payload).contains(cast.elsewhere.userId), "\(event.type)")
                #expect(!mentions(event.payload, cast.elsewhere.userId), "\(event.type)")
            }
        }
    }

    /// A point off the caller's campus, where the exchange flow takes one: who gives it, and the campus it is not on.
    enum OffCampusPoint: String, CaseIterable, Sendable {
        /// Otto of Aalto lists a snack at a point of Helsinki's campus.
        case listingPlace
        /// Olli of Helsinki moves his listing to Otaniemi.
        case editedPlace
        /// Otto of Aalto browses near a point of Helsinki's campus.
        case browseNear
    }

    @Test(arguments: OffCampusPoint.allCases)
    func aPointOffTheCallersCampusIsAProblemNamingTheFieldAndTheCampusAndNothingIsStored(_ point: OffCampusPoint)
        async throws
    {
        try await withCast { app, cast, tokens, client in
            let (owner, elsewhere) = (tokens[cast.owner.userId]!, tokens[cast.elsewhere.userId]!)
            let listingId = try await create(client, owner, listing("Pulla"))
            let (aalto, helsinki) = ("Aalto University, Otaniemi", "University of Helsinki, City Centre Campus")

            let ((status, problem), field, campus): ((HTTPResponse.Status, [String: Any]), String, String)
            switch point {
            case .listingPlace:
                (status, problem) = try await client.call(
                    .post, "/v1/listings", token: elsewhere,
                    body: listing("Jaffa", place: ["lat": 60.17, "lon": 24.95]))
                (field, campus) = ("place", aalto)
            case .editedPlace:
                (status, problem) = try await client.call(
                    .patch, "/v1/listings/\(listingId)", token: owner,
                    body: ["offered": "Moved", "place": ["lat": 60.186, "lon": 24.828]])
                (field, campus) = ("place", helsinki)
            case .browseNear:
                (status, problem) = try await client.call(.get, "/v1/listings?near=60.17,24.95", token: elsewhere)
                (field, campus) = ("near", aalto)
            }

            #expect(status == .badRequest && problem["field"] as? String == field, "\(problem)")
            #expect((problem["detail"] as? String)?.contains(campus) == true, "\(problem)")
            let (_, kept) = try await client.call(.get, "/v1/listings/\(listingId)", token: owner)
            #expect(kept["offered"] as? String == "Pulla")
            #expect((kept["place"] as? [String: Any])?["lat"] as? Double == 60.17008)
            #expect(try await countListings(app) == 1)
        }
    }

    @Test func badInputIsAProblemNamingItsFieldAndNothingIsStored() async throws {
        try await withCast { app, cast, tokens, client in
            let token = tokens[cast.owner.userId]!
            let cases: [([String: Any], String)] = [
                (listing("Pulla", category: "spicy"), "category"),
                (listing(""), "offered"),
                (listing(String(repeating: "x", count: 201)), "offered"),
                (listing("Pulla", wanted: (0..<11).map { "Snack \($0)" }), "wanted"),
                (listing("Pulla", place: ["lat": 91, "lon": 24.9]), "place.lat"),
                (listing("Pulla", place: ["lat": 60.1]), "place"),
                (listing("Pulla", place: ["lat": 60.1, "lon": 24.9, "placeId": UUID().uuidString]), "place"),
                (["offered": "Pulla", "category": "sweet"], "place"),
                (listing("Pulla").merging(["note": String(repeating: "n", count: 501)]) { $1 }, "note"),
                (listing("Pulla").merging(["photoId": "not-a-uuid"]) { $1 }, "photoId"),
            ]
            for (body, field) in cases {
                let (status, problem) = try await client.call(.post, "/v1/listings", token: token, body: body)
                #expect(status == .badRequest && problem["field"] as? String == field, "\(body)")
            }
            let (unknownPlace, placeProblem) = try await client.call(
                .post, "/v1/listings", token: token, body: listing("Pulla", place: ["placeId": UUID().uuidString]))
            for query in ["?category=spicy", "?near=60.17", "?radius=100", "?limit=0", "?mine=yes", "?after=nonsense"] {
                let (status, _) = try await client.call(.get, "/v1/listings\(query)", token: token)
                #expect(status == .badRequest, "\(query)")
            }
            let (unknownListing, _) = try await client.call(.post, "/v1/listings/\(UUID())/agree", token: token)
            let (unknownExchange, _) = try await client.call(.get, "/v1/exchanges/\(UUID())", token: token)

            #expect(unknownPlace == .notFound && placeProblem["detail"] as? String == "No such place.")
            #expect(unknownListing == .notFound && unknownExchange == .notFound)
            #expect(try await countListings(app) == 0)
        }
    }

    @Test func aPhotoMustBeTheOwnersOwnStoredImage() async throws {
        try await withCast { app, cast, tokens, client in
            let (own, others, deleted) = (UUID(), UUID(), UUID())
            try await app.database.pool.transaction { connection in
                try ReadModels.applyImage(
                    MediaStored(
                        mediaId: own, ownerId: cast.owner.userId, campus: "helsinki.fi", contentType: "image/jpeg",
                        width: 640, height: 480),
                    on: connection)
                try ReadModels.applyImage(
                    MediaStored(
                        mediaId: others, ownerId: cast.other.userId, campus: "helsinki.fi", contentType: "image/png",
                        width: 64, height: 64),
                    on: connection)
                // The deletion overtakes its image: the late stored event must not bring it back.
                try ReadModels.applyImageDeleted(
                    MediaDeleted(mediaId: deleted, ownerId: cast.owner.userId), on: connection)
                try ReadModels.applyImage(
                    MediaStored(
                        mediaId: deleted, ownerId: cast.owner.userId, campus: "helsinki.fi", contentType: "image/jpeg",
                        width: 64, height: 64),
                    on: connection)
            }
            let token = tokens[cast.owner.userId]!

            let (theirs, problem) = try await client.call(
                .post, "/v1/listings", token: token,
                body: listing("Jaffa").merging(["photoId": others.uuidString]) { $1 })
            let (gone, _) = try await client.call(
                .post, "/v1/listings", token: token,
                body: listing("Jaffa").merging(["photoId": deleted.uuidString]) { $1 })
            let (unknown, _) = try await client.call(
                .post, "/v1/listings", token: token,
                body: listing("Jaffa").merging(["photoId": UUID().uuidString]) { $1 })
            let storedBefore = try await countListings(app)
            let (mine, listing) = try await client.call(
                .post, "/v1/listings", token: token, body: listing("Jaffa").merging(["photoId": own.uuidString]) { $1 })
            let listingId = try #require(listing["id"] as? String)
            let (editToTheirs, _) = try await client.call(
                .patch, "/v1/listings/\(listingId)", token: token, body: ["photoId": others.uuidString])

            #expect(theirs == .notFound && (problem["detail"] as? String)?.contains("photoId") == true)
            #expect(gone == .notFound && unknown == .notFound && storedBefore == 0)
            #expect(mine == .created && listing["photoId"] as? String == own.uuidString)
            #expect(editToTheirs == .notFound)
        }
    }
}
