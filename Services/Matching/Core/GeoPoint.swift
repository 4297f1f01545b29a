import Foundation
import Postgres

/// A point on the map, in degrees.
public struct GeoPoint: Codable, Sendable, Equatable {
    public var lat: Double
    public var lon: Double

    public init(lat: Double, lon: Double) {
        self.lat = lat
        self.lon = lon
    }

    /// A latitude from -90 to 90 and a longitude from -180 to 180; a problem names `field.lat` or `field.lon`
    /// (plain `lat` or `lon` when `field` is nil).
    public static func validated(lat: Double, lon: Double, field: String?) throws -> GeoPoint {
        let prefix = field.map { "\($0)." } ?? ""
        guard lat.isFinite, (-90...90).contains(lat) else {
            throw MatchingError.invalid(field: "\(prefix)lat", "\(prefix)lat is a latitude from -90 to 90.")
        }
        guard lon.isFinite, (-180...180).contains(lon) else {
            throw MatchingError.invalid(field: "\(prefix)lon", "\(prefix)lon is a longitude from -180 to 180.")
        }
        return GeoPoint(lat: lat, lon: lon)
    }

    /// The point as a PostGIS geometry (SRID 4326), for SQL.
    private var geometry: SQL {
        "ST_SetSRID(ST_MakePoint(\(lon)::double precision, \(lat)::double precision), 4326)"
    }

    /// The point as a PostGIS geography (SRID 4326), for SQL.
    public var geography: SQL { "\(geometry)::geography" }

    /// The point of two columns (or other SQL) in degrees as a PostGIS geography (SRID 4326), for SQL: with
    /// `ST_Distance`, a distance in meters.
    public static func geography(lat: String, lon: String) -> SQL {
        "ST_SetSRID(ST_MakePoint(\(unescaped: lon), \(unescaped: lat)), 4326)::geography"
    }

    /// The point a query's `lat` and `lon` give, nil when it gives neither; a problem names the one that is wrong.
    public static func query(lat: String?, lon: String?) throws -> GeoPoint? {
        guard lat != nil || lon != nil else { return nil }
        func degrees(_ raw: String?, _ field: String) throws -> Double {
            guard let value = raw.flatMap(Double.init) else {
                throw MatchingError.invalid(field: field, "\(field) is a number of degrees.")
            }
            return value
        }
        return try validated(lat: try degrees(lat, "lat"), lon: try degrees(lon, "lon"), field: nil)
    }

    /// A box around the point that holds the circle of `meters`, with a margin, as a PostGIS geography for SQL. With
    /// `&&` it bounds a walk of a spatial index in distance order (`<->`), which a filter on the distance alone would
    /// not stop where fewer rows than asked for are in the circle. The longitude is capped near the poles.
    public func box(meters: Double) -> SQL {
        let metersPerDegree = 111_320.0
        let latitudeDegrees = meters * 1.1 / metersPerDegree
        let cosine = cos(min(abs(lat) + latitudeDegrees, 90) * .pi / 180)
        let longitudeDegrees = cosine > 0.01 ? min(latitudeDegrees / cosine, 180) : 180
        return
            "ST_Expand(\(geometry), \(longitudeDegrees)::double precision, \(latitudeDegrees)::double precision)::geography"
    }
}

/// Where something is, as a request gives it: a point, or a place of the caller's campus.
public enum PlaceChoice: Sendable, Equatable {
    case point(GeoPoint)
    case place(UUID)

    /// A point `{lat, lon}` or a place `{placeId}`, exactly one of them; a problem names `field`.
    public static func validated(lat: Double?, lon: Double?, placeId: UUID?, field: String) throws
        -> PlaceChoice
    {
        switch (lat, lon, placeId) {
        case (nil, nil, let placeId?):
            return .place(placeId)
        case (let lat?, let lon?, nil):
            return .point(try GeoPoint.validated(lat: lat, lon: lon, field: field))
        default:
            throw MatchingError.invalid(
                field: field, "\(field) is a point {\"lat\", \"lon\"} or a place {\"placeId\"}.")
        }
    }
}
