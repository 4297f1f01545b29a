import ArgumentParser
import BenchmarkSupport
import Foundation
import Logging
import MatchingCore
import ServiceKit
import Tutoring

/// `tutoring-benchmark [--profiles 20000] [--courses 300] [--queries 400]`: fills a fresh matching database with
/// tutoring profiles of one campus (a few courses each, popular courses more often), then reports feed latency
/// percentiles with 1 and 16 clients and how many swipes a second 16 clients make. Needs `BENCH_POSTGRES_URL` (or
/// the test command's `TEST_POSTGRES_URL`).
@main
struct TutoringBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tutoring-benchmark",
        abstract: "Measures the tutoring feed and swipes on a fresh database of generated profiles.")

    @Option(help: "How many profiles (three in ten tutors).")
    var profiles = 20_000
    @Option(help: "How many distinct courses.")
    var courses = 300
    @Option(help: "How many feed pages each client count reads.")
    var queries = 400
    @Option(help: "How many swipes the swipe round makes.")
    var swipes = 2000

    func run() async throws {
        let logger = Logger(label: "tutoring-benchmark")
        let database = try await BenchmarkDatabase.fresh(
            named: "bench_tutoring", migrations: [MatchingMigrations.directory, TutoringFlow.migrations!], poolSize: 16,
            logger: logger)
        let steps = TutoringSteps(database: database)
        var random = SeededRandom(seed: 42)
        let codes = (0..<courses).map { "C-\(100 + $0)" }
        var callers: [(Identity, TutoringRole)] = []
        var saves: [BenchmarkJob] = []
        for index in 0..<profiles {
            let caller = Identity(userId: UUID(), campus: "helsinki.fi", name: "Student \(index)")
            let role: TutoringRole = random.next() % 10 < 3 ? .tutor : .student
            // Squaring a uniform number makes the low course numbers the popular ones.
            let taken = (0..<(1 + Int(random.next() % 5))).map { _ in
                codes[Int(random.unit() * random.unit() * Double(courses))]
            }
            let input = TutoringProfileInput(
                role: role, courses: Array(Set(taken)), description: "Generated profile \(index)",
                rateCents: Int(random.next() % 4000), availability: "Evenings", preferences: "")
            callers.append((caller, role))
            saves.append { _ = try await steps.saveProfile(input, caller: caller) }
        }
        let saved = try await LatencyRun.measure(saves, clients: 16)
        print("saved \(profiles) profiles over \(courses) courses: \(saved.perSecond(profiles)) a second\n")
        // What autovacuum would do soon after such a load: statistics for the planner, a current visibility map.
        try await database.withConnection { try $0.execute(script: "VACUUM ANALYZE") }
        print("| measure | clients | p50 ms | p99 ms | per s |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for clients in [1, 16] {
            let pages: [BenchmarkJob] = (0..<queries).map { _ in
                let caller = callers[Int(random.next() % UInt64(callers.count))].0
                return { _ = try await steps.feed(caller: caller, course: nil, after: nil, limit: 20) }
            }
            let run = try await LatencyRun.measure(pages, clients: clients)
            print(run.row("feed, 20 cards", clients: clients, count: queries))
        }
        let students = callers.filter { $0.1 == .student }.map(\.0)
        let tutors = callers.filter { $0.1 == .tutor }.map(\.0)
        var pairs = Set<[UUID]>()
        var swipeJobs: [BenchmarkJob] = []
        while swipeJobs.count < swipes {
            let student = students[Int(random.next() % UInt64(students.count))]
            let tutor = tutors[Int(random.next() % UInt64(tutors.count))]
            let fromStudent = random.next() % 2 == 0
            let (swiper, target) = fromStudent ? (student, tutor) : (tutor, student)
            guard pairs.insert([swiper.userId, target.userId]).inserted else { continue }
            let likes = random.next() % 2 == 0
            swipeJobs.append { _ = try await steps.swipe(caller: swiper, target: target.userId, likes: likes) }
        }
        let swiped = try await LatencyRun.measure(swipeJobs, clients: 16)
        print(swiped.row("swipe", clients: 16, count: swipes))
        try await database.close()
    }
}
