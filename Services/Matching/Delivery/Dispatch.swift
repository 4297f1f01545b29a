import Foundation

/// Who gets the next offer, without I/O.
enum Dispatch {
    /// A run that could take an order.
    struct Candidate: Sendable, Equatable {
        var runId: String
        /// From the run's destination to the order's.
        var detourMeters: Double
        var freeSeats: Int
        var wasOfferedBefore: Bool
    }

    /// How far from an order's destination a run may be heading: an order that asks for a run takes it wherever it
    /// goes; any other, runs within `matchRadius` meters.
    static func radius(requestedRunId: UUID?, matchRadius: Double) -> Double {
        requestedRunId == nil ? matchRadius : .infinity
    }

    /// The nearest eligible run: free capacity, destination within `radius` of the order's, not offered this order
    /// before. Ties go to the run with more room.
    static func choose(_ candidates: [Candidate], radius: Double) -> Candidate? {
        candidates
            .filter { $0.freeSeats > 0 && !$0.wasOfferedBefore && $0.detourMeters <= radius }
            .min { ($0.detourMeters, -$0.freeSeats) < ($1.detourMeters, -$1.freeSeats) }
    }
}
