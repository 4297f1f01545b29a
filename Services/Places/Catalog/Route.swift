import Foundation
import ServiceKit

/// How a route is travelled: on foot along footways, paths and pedestrian streets in either direction, or by car on
/// the roads cars may use, along one-way streets only their way.
package enum RouteMode: String, Codable, Sendable, CaseIterable {
    case walk
    case drive

    /// Walking pace, meters a second; also the pace of the stretches from the asked points to the nearest junction.
    package static let walkingSpeed = 1.3
}

/// A route as the API shows it: along the streets from `from` to `to`.
package struct Route: Codable, Sendable, Equatable {
    package var mode: RouteMode
    package var meters: Double
    package var seconds: Double
    package var path: LineString

    /// A GeoJSON LineString, coordinates `[lon, lat]`.
    package struct LineString: Codable, Sendable, Equatable {
        package var type = "LineString"
        package var coordinates: [[Double]]
    }
}

/// The request rules of routing, without I/O.
package enum RouteQuery {
    /// How far an asked point may be from the nearest junction of its mode's network.
    package static let maxSnapMeters = 100.0

    /// A `lat,lon` point of the query parameter `field`, which must lie on `campus`.
    package static func point(_ raw: String?, field: String, campus: Campus?) throws(PlaceError) -> Coordinate {
        guard let raw else { throw .invalid(field: field, "\(field) is required: lat,lon in degrees.") }
        let parts = raw.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let latitude = Double(parts[0].trimmingCharacters(in: .whitespaces)),
            let longitude = Double(parts[1].trimmingCharacters(in: .whitespaces))
        else { throw .invalid(field: field, "\(field) is lat,lon in degrees, such as 60.1697,24.9484.") }
        let point = Coordinate(latitude: latitude, longitude: longitude)
        guard point.isValid else {
            throw .invalid(field: field, "\(field) is a latitude from -90 to 90 and a longitude from -180 to 180.")
        }
        guard let campus, campus.bounds.contains(.init(latitude: latitude, longitude: longitude)) else {
            throw .invalid(field: field, "\(field) is not on your campus.")
        }
        return point
    }

    /// `mode`, walk when not given.
    package static func mode(_ raw: String?) throws(PlaceError) -> RouteMode {
        guard let raw else { return .walk }
        guard let mode = RouteMode(rawValue: raw) else { throw .invalid(field: "mode", "mode is walk or drive.") }
        return mode
    }
}
