import ArgumentParser
import Foundation
import PlaceCatalog
import ServiceKit

/// The places service: `places` (or `places serve`) serves the search API; `places import FILE` loads OpenStreetMap
/// GeoJSON into its database.
@main
struct Places: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "places", abstract: "Searches the restaurants and buildings of each campus.",
        subcommands: [Serve.self, Import.self], defaultSubcommand: Serve.self)
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serves the places API (the default). Settings come from the environment; see the README.")

    func run() async {
        await ServiceMain.run(service: "places", defaultPort: 8082, build: buildApplication)
    }
}

/// Imports, prints progress and the summary. The relay of a running server publishes the events the import wrote to
/// the outbox.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Imports places from GeoJSON exported from OpenStreetMap with ids.",
        discussion: """
            Export with ids, e.g. `osmium export --add-unique-id=type_id -f geojsonseq campus.osm.pbf -o places.geojsonseq`. \
            Each place goes to the campus whose bounds hold it. Places of those campuses that the file no longer has \
            are retired, unless the file has broken features or no valid place; more than a fifth of a campus only \
            with --retire-many. Reads POSTGRES_URL.
            """)

    @Argument(help: "A GeoJSON FeatureCollection or GeoJSON text sequence (one feature a line).")
    var file: String
    @Option(help: "Put every place on this campus (its email domain) instead of the one whose bounds hold it.")
    var campus: String?
    @Flag(help: "Retire the places the file does not have even when they are more than a fifth of a campus.")
    var retireMany = false

    func run() async {
        do {
            let configuration = try ServiceConfiguration(service: "places", defaultPort: 8082)
            let logger = ServiceLogging.bootstrap(configuration)
            let campuses = try CampusDirectory.load(extraFile: configuration.campusesFile)
            var forcedCampus: Campus?
            if let campus {
                guard let named = campuses.campus(forDomain: campus) else {
                    throw ValidationError(
                        "--campus \(campus) is not a campus; campuses: \(campuses.all.map(\.domain).joined(separator: ", "))"
                    )
                }
                forcedCampus = named
            }
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            let database = try await openDatabase(
                configuration, migrations: PlacePostgresRepository.migrations, logger: logger)
            let importer = PlaceImporter(repository: PlacePostgresRepository(database: database), campuses: campuses)
            let start = ContinuousClock.now
            let summary: PlaceImporter.Summary
            do {
                summary = try await importer.importGeoJSON(
                    data, campus: forcedCampus, retiresMany: retireMany, progress: { print($0) })
            } catch let error as GeoJSONError {
                throw ValidationError("\(file) is not usable GeoJSON: \(error)")
            }
            print("imported \(file) in \(ContinuousClock.now - start)\n\(summary)")
            try await database.close()
        } catch {
            ServiceMain.fail("places import", error)
        }
    }
}
