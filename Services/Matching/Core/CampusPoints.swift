import Foundation
import ServiceKit

/// The campuses, and the one rule every flow asks of the points students give: a point lies on the student's own
/// campus, or, where it may reach past it (where a trip ends, where someone coming in stands), within a distance of
/// the campus's box.
/// A point refused is a 400 problem naming the field and the campus, before anything is stored.
public struct CampusPoints: Sendable {
    public let directory: CampusDirectory

    /// How far past its campus's box a point may lie.
    public enum Reach: Sendable {
        /// On the box: where something is offered, asked for or brought, and where a student looks from.
        case onCampus
        /// Within the campus's `marginMeters`: where someone who comes in from outside stands when they are told of
        /// what the campus asks for.
        case margin
        /// Within the campus's `dropoffRadiusMeters`: where a trip from the campus ends.
        case dropoff
    }

    public init(_ directory: CampusDirectory) {
        self.directory = directory
    }

    /// The bundled campuses and those of `CAMPUSES_FILE`.
    public init(_ configuration: ServiceConfiguration) throws {
        self.init(try CampusDirectory.load(extraFile: configuration.campusesFile))
    }

    /// Whether `point` lies within `reach` of the campus of the domain `campus`; a campus not configured holds none.
    public func isWithin(_ reach: Reach, of campus: String, _ point: GeoPoint) -> Bool {
        guard let found = directory.campus(forDomain: campus) else { return false }
        let distance = found.distanceMeters(to: Campus.Point(latitude: point.lat, longitude: point.lon))
        return distance <= Self.allowance(reach, of: found)
    }

    /// `point` when it lies within `reach` of the campus of the domain `campus`, else a 400 problem that names `field`
    /// and the campus ("60.17, 24.95 is not on Aalto University, Otaniemi.").
    @discardableResult
    public func require(_ point: GeoPoint, within reach: Reach = .onCampus, of campus: String, field: String)
        throws(MatchingError) -> GeoPoint
    {
        guard !isWithin(reach, of: campus, point) else { return point }
        let given = "\(point.lat), \(point.lon)"
        guard let found = directory.campus(forDomain: campus) else {
            throw .invalid(field: field, "\(given) is not on your campus (\(campus)).")
        }
        switch reach {
        case .onCampus:
            throw .invalid(field: field, "\(given) is not on \(found.name).")
        case .margin, .dropoff:
            throw .invalid(
                field: field,
                "\(given) is more than \(Self.spoken(Self.allowance(reach, of: found))) from \(found.name).")
        }
    }

    /// The point of `choice` when it is one, as `require` checks it; a place is the campus's by its own lookup.
    public func require(_ choice: PlaceChoice, within reach: Reach = .onCampus, of campus: String, field: String)
        throws(MatchingError)
    {
        if case .point(let point) = choice {
            try require(point, within: reach, of: campus, field: field)
        }
    }

    /// How far past the box `reach` lets a point of `campus` lie.
    private static func allowance(_ reach: Reach, of campus: Campus) -> Double {
        switch reach {
        case .onCampus: 0
        case .margin: campus.marginMeters
        case .dropoff: campus.dropoffRadiusMeters
        }
    }

    /// A distance as a person says it: "2 km", "2.5 km", "800 m".
    private static func spoken(_ meters: Double) -> String {
        guard meters >= 1000 else { return "\(Int(meters.rounded())) m" }
        let kilometers = (meters / 100).rounded() / 10
        return kilometers == kilometers.rounded() ? "\(Int(kilometers)) km" : "\(kilometers) km"
    }
}
