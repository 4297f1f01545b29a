import Foundation
import Testing

@testable import ServiceKit

/// A campus's box, how far a point lies from it, and the settings a campus file may leave out.
@Suite struct CampusTests {
    static let otaniemi = Campus(
        domain: "aalto.fi", name: "Aalto University, Otaniemi",
        center: Campus.Point(latitude: 60.186, longitude: 24.828),
        bounds: Campus.Bounds(minLatitude: 60.180, minLongitude: 24.815, maxLatitude: 60.192, maxLongitude: 24.840))

    @Test func aFileWithoutTheNewSettingsGetsTheirDefaultsAndOneWithThemKeepsThem() throws {
        let json = """
            [
                {"domain": "aalto.fi", "name": "Aalto", "center": {"latitude": 60.186, "longitude": 24.828},
                 "bounds": {"minLatitude": 60.18, "minLongitude": 24.815, "maxLatitude": 60.192, "maxLongitude": 24.84}},
                {"domain": "tuni.fi", "name": "Tampere", "center": {"latitude": 61.49, "longitude": 23.78},
                 "bounds": {"minLatitude": 61.48, "minLongitude": 23.77, "maxLatitude": 61.5, "maxLongitude": 23.79},
                 "dropoffRadiusMeters": 12000, "marginMeters": 500}
            ]
            """

        let campuses = try JSONDecoder().decode([Campus].self, from: Data(json.utf8))

        #expect(campuses[0].dropoffRadiusMeters == 30_000 && campuses[0].marginMeters == 2_000)
        #expect(campuses[1].dropoffRadiusMeters == 12_000 && campuses[1].marginMeters == 500)
        #expect(try JSONDecoder().decode(Campus.self, from: JSONEncoder().encode(campuses[1])) == campuses[1])
    }

    @Test func theBundledAndTheExtraCampusesLoadWithTheirDefaults() throws {
        let directory = try CampusDirectory.load(extraFile: nil)

        let helsinki = try #require(directory.campus(forDomain: "helsinki.fi"))
        #expect(helsinki.marginMeters == Campus.defaultMarginMeters)
        #expect(helsinki.dropoffRadiusMeters == Campus.defaultDropoffRadiusMeters)
    }

    @Test func aPointInsideTheBoxIsOnTheCampusAtNoDistance() {
        for point in [
            Campus.Point(latitude: 60.186, longitude: 24.828), Campus.Point(latitude: 60.180, longitude: 24.815),
            Campus.Point(latitude: 60.192, longitude: 24.840),
        ] {
            #expect(Self.otaniemi.contains(point))
            #expect(Self.otaniemi.distanceMeters(to: point) == 0)
        }
        #expect(!Self.otaniemi.contains(Campus.Point(latitude: 60.17, longitude: 24.95)))
    }

    @Test func theDistanceIsTheHaversineToTheNearestPointOfTheBox() {
        // One degree of latitude is 111.195 km on the mean sphere; one of longitude at 60.186° N about half that.
        let north = Self.otaniemi.distanceMeters(to: Campus.Point(latitude: 60.292, longitude: 24.83))
        let east = Self.otaniemi.distanceMeters(to: Campus.Point(latitude: 60.186, longitude: 24.940))
        let corner = Self.otaniemi.distanceMeters(to: Campus.Point(latitude: 60.170, longitude: 24.800))
        let helsinki = Campus.Point(latitude: 60.1712, longitude: 24.9497)

        #expect(abs(north - 11_119.5) < 1)
        #expect(abs(east - 0.1 * 111_195 * cos(60.186 * .pi / 180)) < 2)
        #expect(
            abs(
                corner
                    - Campus.Point(latitude: 60.180, longitude: 24.815).haversineMeters(
                        to: .init(latitude: 60.170, longitude: 24.800))) < 0.001)
        #expect(corner > 1_100 && corner < 1_500)
        #expect(abs(Campus.Point(latitude: 60.186, longitude: 24.828).haversineMeters(to: helsinki) - 6_935) < 20)
    }
}
