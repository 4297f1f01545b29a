import ArgumentParser
import BenchmarkSupport
import Exchange
import Foundation
import Logging
import MatchingCore
import Postgres
import ServiceKit

/// `exchange-benchmark [--listings 50000] [--queries 400]`: fills a fresh matching database with snack listings of
/// one campus (snack names from a list, with accents, half of them with a made-up word of their own; each wanting up
/// to three others), then reports text search, nearby and newest latency percentiles with 1 and 16 clients, and how
/// many listings a page held on average. Needs `BENCH_POSTGRES_URL` (or the test command's `TEST_POSTGRES_URL`):
/// a role that can create databases and the PostGIS, pg_trgm and unaccent extensions.
@main
struct ExchangeBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exchange-benchmark",
        abstract: "Measures searching and browsing snack listings on a fresh database of generated listings.")

    @Option(help: "How many listings.")
    var listings = 50_000
    @Option(help: "How many browses each kind of browse and client count makes.")
    var queries = 400

    /// The Helsinki campus centre, and how far listings spread from it in degrees of latitude.
    static let center = GeoPoint(lat: 60.1719, lon: 24.9492)
    static let span = 0.02
    /// The campus of the listings as wide as they spread, so that every point the benchmark gives is on it.
    static let campuses = CampusPoints(
        CampusDirectory([
            Campus(
                domain: "helsinki.fi", name: "Helsinki, as wide as the benchmark",
                center: Campus.Point(latitude: center.lat, longitude: center.lon),
                bounds: Campus.Bounds(
                    minLatitude: center.lat - span, minLongitude: center.lon - span * 2,
                    maxLatitude: center.lat + span, maxLongitude: center.lon + span * 2))
        ]))

    static let brands = [
        "Fazer", "Panda", "Marabou", "Brunberg", "Oululainen", "Taffel", "Estrella", "Hartwall", "Valio", "Paulig",
    ]
    static let snacks = [
        "Sininen", "Täyspaahto", "Salmiakki", "Lakritsi", "Geisha", "Dumle", "Tupla", "Kismet", "Pätkis", "Jaffa",
        "Omenamehu", "Karjalanpiirakka", "Ruisleipä", "Pulla", "Korvapuusti", "Mustikkapiirakka", "Sipsit", "Popcorn",
        "Pähkinäsekoitus", "Proteiinipatukka", "Banaani", "Omena", "Energiajuoma", "Kaurakeksi", "Suklaakeksi",
        "Vihersmoothie", "Hedelmäsalaatti", "Juustosämpylä", "Leipäjuusto", "Marianne",
    ]
    static let categories: [ListingCategory] = [.sweet, .salty, .drink, .healthy, .other]
    static let syllables = [
        "ka", "pu", "lä", "mö", "ri", "sa", "to", "vi", "ne", "jo", "hä", "ku", "ly", "pe", "so", "ta", "mi", "rö",
    ]

    func run() async throws {
        let logger = Logger(label: "exchange-benchmark")
        let database = try await BenchmarkDatabase.fresh(
            named: "bench_exchange", migrations: [MatchingMigrations.directory, ExchangeFlow.migrations!], poolSize: 16,
            logger: logger)
        let steps = ExchangeSteps(database: database, campuses: Self.campuses)
        var random = SeededRandom(seed: 7)
        let owners = (0..<max(1, listings / 5)).map {
            Identity(userId: UUID(), campus: "helsinki.fi", name: "Student \($0)")
        }
        var creates: [BenchmarkJob] = []
        for _ in 0..<listings {
            let owner = owners[Int(random.next() % UInt64(owners.count))]
            let draft = ListingDraft(
                offered: Self.snackName(&random),
                wanted: (0..<Int(random.next() % 4)).map { _ in Self.snackName(&random) },
                category: Self.categories[Int(random.next() % UInt64(Self.categories.count))],
                place: .point(Self.point(&random)), photoId: nil, note: nil)
            creates.append { _ = try await steps.createListing(id: nil, draft, caller: owner) }
        }
        let created = try await LatencyRun.measure(creates, clients: 16)
        print("created \(listings) listings: \(created.perSecond(listings)) a second\n")
        // What autovacuum would do soon after such a load: statistics for the planner, a current visibility map.
        try await database.withConnection { try $0.execute(script: "VACUUM ANALYZE") }
        let browser = Identity(userId: UUID(), campus: "helsinki.fi", name: "Browser")
        let kinds: [(String, (inout SeededRandom) -> ListingQuery)] = [
            (
                "search, prefix",
                { random in
                    let word = Self.word(&random)
                    return ListingQuery(text: String(word.prefix(3 + Int(random.next() % 4))))
                }
            ),
            (
                "search, typo",
                { random in
                    var letters = Array(Self.word(&random))
                    letters.remove(at: 1 + Int(random.next() % UInt64(letters.count - 2)))
                    return ListingQuery(text: String(letters))
                }
            ),
            ("search, rare word", { random in ListingQuery(text: Self.madeUpWord(&random)) }),
            (
                "search, two words",
                { random in
                    ListingQuery(text: "\(Self.word(&random)) \(Self.word(&random).prefix(4))")
                }
            ),
            ("nearby, 500 m", { random in ListingQuery(near: Self.point(&random), radiusMeters: 500) }),
            ("newest", { _ in ListingQuery() }),
        ]
        print("| browse | clients | p50 ms | p99 ms | per s | listings a page |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for (label, makeQuery) in kinds {
            for clients in [1, 16] {
                let found = Tally()
                let jobs: [BenchmarkJob] = (0..<queries).map { _ in
                    let query = makeQuery(&random)
                    return { found.add(try await steps.browse(query, caller: browser).listings.count) }
                }
                let run = try await LatencyRun.measure(jobs, clients: clients)
                print(run.row(label, clients: clients, count: queries) + String(format: " %.1f |", found.average))
            }
        }
        try await database.close()
    }

    /// "Fazer Täyspaahto", or a snack alone; half of them with a made-up word ("Panda Lakritsi Kapulä").
    static func snackName(_ random: inout SeededRandom) -> String {
        let snack = snacks[Int(random.next() % UInt64(snacks.count))]
        let name = random.next() % 3 == 0 ? snack : "\(brands[Int(random.next() % UInt64(brands.count))]) \(snack)"
        return random.next() % 2 == 0 ? "\(name) \(madeUpWord(&random).capitalized)" : name
    }

    /// Two or three syllables: about 6,000 words, each in a few listings.
    static func madeUpWord(_ random: inout SeededRandom) -> String {
        (0..<(2 + Int(random.next() % 2))).map { _ in syllables[Int(random.next() % UInt64(syllables.count))] }.joined()
    }

    /// A brand or a snack, in lower case and without accents some of the time, as people type.
    static func word(_ random: inout SeededRandom) -> String {
        let word =
            random.next() % 3 == 0
            ? brands[Int(random.next() % UInt64(brands.count))] : snacks[Int(random.next() % UInt64(snacks.count))]
        return random.next() % 2 == 0 ? word.lowercased().folding(options: .diacriticInsensitive, locale: nil) : word
    }

    static func point(_ random: inout SeededRandom) -> GeoPoint {
        GeoPoint(lat: center.lat + (random.unit() - 0.5) * span, lon: center.lon + (random.unit() - 0.5) * span * 2)
    }
}
