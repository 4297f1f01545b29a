import ArgumentParser
import BenchmarkSupport
import Foundation
import Logging
import MediaImaging
import MediaStorage

/// `media-benchmark [--megabytes 3] [--uploads 40] [--clients 1 2 4]`: uploads a phone-sized photo through media's
/// own upload path (read and checked, made upright, stripped, two variants, hashed, kept in PostgreSQL with its
/// event) into a fresh database, and reports upload latency percentiles and uploads a second per client count.
/// Needs `BENCH_POSTGRES_URL` (or the test command's `TEST_POSTGRES_URL`).
@main
struct MediaBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "media-benchmark", abstract: "Measures image uploads with their variants on a fresh database.")

    @Option(help: "The size of the photo, in megabytes (12 megapixels, grain tuned to reach it).")
    var megabytes = 3.0
    @Option(help: "How many uploads each client count makes.")
    var uploads = 40
    @Option(parsing: .upToNextOption, help: "The client counts to measure.")
    var clients = [1, 2, 4]

    func run() async throws {
        let photo = try Self.photo(bytes: Int(megabytes * 1_000_000))
        print(String(format: "photo: 4000 × 3000 JPEG of %.2f MB", Double(photo.count) / 1_000_000))
        let database = try await BenchmarkDatabase.fresh(
            named: "bench_media", migrations: MediaLibrary.migrations, poolSize: 8,
            logger: Logger(label: "media-benchmark"))
        let library = MediaLibrary(
            repository: MediaPostgresRepository(database: database), store: PostgresImageStore(database: database))
        print("| measure | clients | p50 ms | p99 ms | per s |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for clients in clients {
            let jobs: [BenchmarkJob] = (0..<uploads).map { _ in
                { _ = try await library.upload(photo, owner: UUID(), campus: "helsinki.fi", idempotencyKey: nil) }
            }
            let run = try await LatencyRun.measure(jobs, clients: clients)
            print(
                run.row(
                    String(format: "upload of %.1f MB with variants", Double(photo.count) / 1_000_000),
                    clients: clients, count: uploads))
        }
    }

    /// A 12-megapixel JPEG within a tenth of `bytes`, found by halving the range of grain strengths.
    static func photo(bytes: Int) throws -> Data {
        var (low, high) = (0.5, 128.0)
        var photo = try ImageProcessor.grainPhoto(width: 4000, height: 3000, grain: (low + high) / 2)
        for _ in 0..<12 where abs(photo.count - bytes) > bytes / 10 {
            if photo.count > bytes { high = (low + high) / 2 } else { low = (low + high) / 2 }
            photo = try ImageProcessor.grainPhoto(width: 4000, height: 3000, grain: (low + high) / 2)
        }
        return photo
    }
}
