import Foundation

/// The live exchange every notifications replica binds its sockets' users to, routing key `user.<id>`. A frame with
/// `seq` is a feed entry; a frame without one (typing, a position) is passed to the user's sockets as it is.
public enum LiveFrames {
    public static let exchange = "notifications.live"

    /// The routing key of one user's live frames.
    public static func routingKey(_ userId: UUID) -> String {
        "user.\(userId.uuidString.lowercased())"
    }
}

/// A position at a moment: the latest one of a ride's driver or a delivery match's deliverer.
public struct LivePosition: Codable, Sendable, Equatable {
    public var lat: Double
    public var lon: Double
    /// When it arrived.
    public var at: Date

    public init(lat: Double, lon: Double, at: Date) {
        self.lat = lat
        self.lon = lon
        self.at = at
    }
}

/// A position on its way to the one user entitled to it, as a live frame without `seq` (never a feed entry):
/// `{"type": "location", "data": {"rideId" | "matchId": "...", "lat": …, "lon": …, "at": "ISO-8601"}}`.
public struct LocationFrame: Codable, Sendable, Equatable {
    public static let type = "location"

    /// What the frame carries: whose ride or match, and where.
    public struct Payload: Codable, Sendable, Equatable {
        public var rideId: UUID?
        public var matchId: UUID?
        public var lat: Double
        public var lon: Double
        public var at: Date

        public init(rideId: UUID? = nil, matchId: UUID? = nil, position: LivePosition) {
            self.rideId = rideId
            self.matchId = matchId
            lat = position.lat
            lon = position.lon
            at = position.at
        }
    }

    public var type: String
    public var data: Payload

    public init(_ data: Payload) {
        type = Self.type
        self.data = data
    }

    /// The frame's JSON, times in ISO 8601 with fractions of a second.
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        }
        return try encoder.encode(self)
    }
}
