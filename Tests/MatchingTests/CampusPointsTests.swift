import Foundation
import ServiceKit
import Testing

@testable import MatchingCore

/// The one rule of every flow for the points students give, without I/O.
@Suite struct CampusPointsTests {
    let campuses = CampusPoints(
        CampusDirectory([
            Campus(
                domain: "aalto.fi", name: "Aalto University, Otaniemi",
                center: Campus.Point(latitude: 60.186, longitude: 24.828),
                bounds: Campus.Bounds(
                    minLatitude: 60.180, minLongitude: 24.815, maxLatitude: 60.192, maxLongitude: 24.840),
                dropoffRadiusMeters: 30_000, marginMeters: 2_000)
        ]))
    let onCampus = GeoPoint(lat: 60.186, lon: 24.828)
    /// 1.1 km north of the box.
    let nearby = GeoPoint(lat: 60.202, lon: 24.828)
    /// 25 km north of the box.
    let suburb = GeoPoint(lat: 60.4168, lon: 24.828)
    /// 40 km north of the box.
    let farAway = GeoPoint(lat: 60.5517, lon: 24.828)

    @Test func eachReachLetsAPointLieAsFarPastTheBoxAsTheCampusSays() {
        let answers: [(CampusPoints.Reach, [Bool])] = [
            (.onCampus, [true, false, false, false]), (.margin, [true, true, false, false]),
            (.dropoff, [true, true, true, false]),
        ]
        for (reach, expected) in answers {
            let found = [onCampus, nearby, suburb, farAway].map { campuses.isWithin(reach, of: "aalto.fi", $0) }
            #expect(found == expected, "\(reach)")
        }
        #expect(campuses.isWithin(.onCampus, of: "cs.aalto.fi", onCampus))
        #expect(!campuses.isWithin(.dropoff, of: "helsinki.fi", onCampus))
    }

    @Test func aPointRefusedIsAProblemNamingTheFieldAndTheCampus() {
        #expect(throws: MatchingError.invalid(field: "place", "60.17, 24.95 is not on Aalto University, Otaniemi.")) {
            try campuses.require(GeoPoint(lat: 60.17, lon: 24.95), of: "aalto.fi", field: "place")
        }
        #expect(
            throws: MatchingError.invalid(field: "lat", "60.202, 24.828 is not on Aalto University, Otaniemi.")
        ) { try campuses.require(nearby, of: "aalto.fi", field: "lat") }
        #expect(
            throws: MatchingError.invalid(
                field: "dropoff", "60.5517, 24.828 is more than 30 km from Aalto University, Otaniemi.")
        ) { try campuses.require(farAway, within: .dropoff, of: "aalto.fi", field: "dropoff") }
        #expect(
            throws: MatchingError.invalid(
                field: "lat", "60.4168, 24.828 is more than 2 km from Aalto University, Otaniemi.")
        ) { try campuses.require(suburb, within: .margin, of: "aalto.fi", field: "lat") }
        #expect(throws: MatchingError.invalid(field: "pickup", "60.186, 24.828 is not on your campus (unknown.fi).")) {
            try campuses.require(onCampus, of: "unknown.fi", field: "pickup")
        }
    }

    @Test func aPlaceIsLeftToItsLookupAndAPointIsChecked() throws {
        try campuses.require(PlaceChoice.place(UUID()), of: "aalto.fi", field: "pickup")
        try campuses.require(PlaceChoice.point(onCampus), of: "aalto.fi", field: "pickup")
        #expect(throws: MatchingError.self) {
            try campuses.require(PlaceChoice.point(nearby), of: "aalto.fi", field: "pickup")
        }
        #expect(try campuses.require(nearby, within: .margin, of: "aalto.fi", field: "lat") == nearby)
    }
}
