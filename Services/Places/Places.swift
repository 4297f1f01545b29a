import ArgumentParser
import Foundation
import PlaceCatalog
import ServiceKit

/// The places service: `places` (or `places serve`) serves the search and routes API; `places import FILE --streets
/// PBF` loads OpenStreetMap GeoJSON and the street network into its database.
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
        abstract:
            "Imports places from GeoJSON exported from OpenStreetMap with ids, and the street network for routes.",
        discussion: """
            Export with ids, e.g. `osmium export --add-unique-id=type_id -f geojsonseq campus.osm.pbf -o places.geojsonseq`. \
            Each place goes to the campus whose bounds hold it. Places of those campuses that the file no longer has \
            are retired, unless the file has broken features or no valid place; more than a fifth of a campus only \
            with --retire-many.

            --streets takes the OpenStreetMap extract itself (.osm.pbf or .osm; osmium, Debian's osmium-tool, reads \
            it): its ways with a highway tag become the street network that routes follow, on each campus they touch. \
            A campus's network is replaced whole in one transaction; routes asked meanwhile use the old one or the new \
            one. FILE and --streets go together or alone, e.g. \
            `places import data/helsinki-centre-places.geojson --streets data/helsinki-centre.osm.pbf`. \
            Reads POSTGRES_URL.
            """)

    @Argument(help: "A GeoJSON FeatureCollection or GeoJSON text sequence (one feature a line).")
    var file: String?
    @Option(help: "An OpenStreetMap extract (.osm.pbf) whose streets become the network routes follow.")
    var streets: String?
    @Option(
        help: "Put every place and street on this campus (its email domain) instead of the one whose bounds hold it.")
    var campus: String?
    @Flag(help: "Retire the places the file does not have even when they are more than a fifth of a campus.")
    var retireMany = false

    func validate() throws {
        guard file != nil || streets != nil else {
            throw ValidationError("Give a GeoJSON FILE, --streets PBF, or both.")
        }
    }

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
            let database = try await openDatabase(
                configuration, migrations: PlacePostgresRepository.migrations, logger: logger)
            if let file {
                let data = try Data(contentsOf: URL(fileURLWithPath: file))
                let importer = PlaceImporter(
                    repository: PlacePostgresRepository(database: database), campuses: campuses)
                let start = ContinuousClock.now
                let summary: PlaceImporter.Summary
                do {
                    summary = try await importer.importGeoJSON(
                        data, campus: forcedCampus, retiresMany: retireMany, progress: { print($0) })
                } catch let error as GeoJSONError {
                    throw ValidationError("\(file) is not usable GeoJSON: \(error)")
                }
                print("imported \(file) in \(ContinuousClock.now - start)\n\(summary)")
            }
            if let streets {
                let importer = StreetImporter(
                    repository: RoutePostgresRepository(database: database), campuses: campuses)
                let start = ContinuousClock.now
                let summary: StreetImporter.Summary
                do {
                    summary = try await importer.importStreets(URL(fileURLWithPath: streets), campus: forcedCampus)
                } catch let error as StreetImportError {
                    throw ValidationError("\(streets): \(error)")
                }
                print("imported the streets of \(streets) in \(ContinuousClock.now - start)\n\(summary)")
            }
            try await database.close()
        } catch {
            ServiceMain.fail("places import", error)
        }
    }
}
