import Foundation
import MatchingCore

/// The states of a ride and the rules of drivers, requests and offers, without I/O. Every transition not listed is
/// refused with `MatchingError.conflict`, which clients see as 409.

/// Where a ride is: open to accept, accepted and under way (the driver arrived, the ride started), or over.
public enum RideStatus: String, Codable, Sendable, CaseIterable {
    case open, accepted, arrived, started, completed, cancelled, expired

    /// What moves a ride from one status to another.
    enum Action: Sendable, Equatable, CaseIterable {
        /// A driver takes the open request.
        case accept
        /// Its driver marks a step of the ride.
        case mark(RideStep)
        /// The rider calls the ride off.
        case cancel
        /// Its driver gives the ride up: it is open again.
        case giveUp
        /// Nobody accepted it in its lifetime.
        case expire
        /// Its driver entered the last wrong code it takes (`RideCode`): the ride is off.
        case refuseCode

        static let allCases: [Action] =
            [.accept] + RideStep.allCases.map(Action.mark) + [.cancel, .giveUp, .expire, .refuseCode]
    }

    /// The status `action` leaves, or 409. NB: accepting and expiring are applied by conditional UPDATEs whose
    /// conditions are these transitions (`status = 'open'`), so that of racing replicas exactly one moves the ride.
    func after(_ action: Action) throws(MatchingError) -> RideStatus {
        switch (self, action) {
        case (.open, .accept): .accepted
        case (let status, .mark(let step)) where status == step.from: step.to
        case (.open, .cancel), (.accepted, .cancel), (.arrived, .cancel): .cancelled
        case (.accepted, .giveUp), (.arrived, .giveUp): .open
        case (.open, .expire): .expired
        case (.arrived, .refuseCode): .cancelled
        default: throw refusal(action)
        }
    }

    /// The 409 of an action this status does not allow.
    func refusal(_ action: Action) -> MatchingError {
        switch action {
        case .accept where isUnderway || self == .completed: .conflict("Another driver accepted this ride first.")
        case .accept: .conflict("This ride request is no longer open.")
        case .mark(let step):
            .conflict(
                "A ride is marked \(step.rawValue) once it is \(step.from.rawValue); this one is \(rawValue).")
        case .cancel, .giveUp: .conflict("This ride is \(rawValue); it can no longer be cancelled.")
        case .expire: .conflict("This ride request is \(rawValue); only an open one expires.")
        case .refuseCode: .conflict("This ride is \(rawValue); a code is entered only once its driver has arrived.")
        }
    }

    /// Accepted and not finished: the driver holds the ride and the rider sees where they are.
    public var isUnderway: Bool {
        self == .accepted || self == .arrived || self == .started
    }

    /// Before the rider is in the car: either side may still call it off.
    public var isCancellable: Bool {
        (try? after(.cancel)) != nil
    }
}

/// What a driver marks of their ride, in this order.
public enum RideStep: String, Sendable, CaseIterable {
    case arrived, started, completed

    /// The status the ride must have for this step.
    var from: RideStatus {
        switch self {
        case .arrived: .accepted
        case .started: .arrived
        case .completed: .started
        }
    }

    /// The status this step leaves.
    var to: RideStatus {
        switch self {
        case .arrived: .arrived
        case .started: .started
        case .completed: .completed
        }
    }
}

/// Who a caller is to a ride: its rider, or the driver who holds it.
enum RideParty: Sendable, CaseIterable {
    case rider, driver
}

/// What an offer of a ride does next (`RideRules.offering`).
enum RideOffering: Sendable, Equatable {
    /// The ride is not open: nothing.
    case nothing
    /// Its rounds are over: it waits in the list alone, and no round is due.
    case noMoreRounds
    /// Offer `round`; the round after is due at `next`, nil after the last.
    case round(OfferRound, next: Date?)
}

/// The rules of drivers, requests and offers, without I/O.
public enum RideRules {
    public static let maxCar = 80
    public static let maxNote = 500
    public static let defaultRadius = 2000.0
    public static let maxRadius = 50_000.0

    static let secondRequest = MatchingError.conflict(
        "You already have a ride request open or under way; cancel it before asking for another.")
    static let secondRideUnderway = MatchingError.conflict(
        "You already have a ride under way; complete or cancel it before accepting another.")
    static let noDriverProfile = MatchingError.conflict("Add a driver profile first with PUT /v1/rides/driver.")
    /// Reading or changing a driver profile that is not there.
    static let missingDriverProfile = MatchingError.notFound("driver profile; create one with PUT /v1/rides/driver")

    /// A car described in 1 to 80 characters on one line ("Blue Toyota Yaris, ABC-123").
    static func car(_ raw: String) throws -> String {
        let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw MatchingError.invalid(field: "car", "car describes your car.") }
        guard raw.unicodeScalars.count <= maxCar else {
            throw MatchingError.invalid(field: "car", "car can have at most \(maxCar) characters.")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw MatchingError.invalid(field: "car", "car is one line without control characters.")
        }
        return text
    }

    /// Seats for riders: 1 to 8.
    static func seats(_ seats: Int) throws -> Int {
        guard (1...8).contains(seats) else { throw MatchingError.invalid(field: "seats", "seats is from 1 to 8.") }
        return seats
    }

    /// An optional note of at most 500 characters (line breaks allowed); nil when blank.
    static func note(_ raw: String?) throws -> String? {
        let text = (raw ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard (raw ?? "").unicodeScalars.count <= maxNote else {
            throw MatchingError.invalid(field: "note", "note can have at most \(maxNote) characters.")
        }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control && $0 != "\n" }) else {
            throw MatchingError.invalid(field: "note", "note cannot contain control characters.")
        }
        return text.isEmpty ? nil : text
    }

    /// A query parameter that is a number; 400 naming it when it is missing (and `required`) or not a number.
    static func number(_ raw: String?, field: String, required: Bool) throws -> Double? {
        guard let raw else {
            guard !required else { throw MatchingError.invalid(field: field, "\(field) is required.") }
            return nil
        }
        guard let value = Double(raw), value.isFinite else {
            throw MatchingError.invalid(field: field, "\(field) is a number.")
        }
        return value
    }

    /// Where a driver asks from: `lat` and `lon`, both required.
    static func near(lat: String?, lon: String?) throws -> GeoPoint {
        try GeoPoint.validated(
            lat: number(lat, field: "lat", required: true)!, lon: number(lon, field: "lon", required: true)!, field: nil
        )
    }

    /// The subject of a ride's chat: "Ride from Porthania to Metsätalo", naming only the places given as places.
    static func subject(pickup: String?, dropoff: String?) -> String {
        switch (pickup, dropoff) {
        case (let pickup?, let dropoff?): "Ride from \(pickup) to \(dropoff)"
        case (let pickup?, nil): "Ride from \(pickup)"
        case (nil, let dropoff?): "Ride to \(dropoff)"
        case (nil, nil): "Ride"
        }
    }

    // MARK: Who may do what

    /// Listing requests, reporting a position and accepting need a driver profile: what was found of it, or 409
    /// naming how to add one.
    static func requireDriverProfile<Found>(_ found: Found?) throws(MatchingError) -> Found {
        guard let found else { throw noDriverProfile }
        return found
    }

    /// A request's client id that names a ride already: the caller's own (a retry, answered with that ride), or 409.
    static func requireOwnRequest(riderId: UUID?, caller: UUID) throws(MatchingError) {
        guard riderId == caller else { throw .conflict("That id is taken.") }
    }

    /// A rider asks for one ride at a time: 409 while a request of theirs is not over.
    static func refuseSecondRequest(hasUnfinishedRequest: Bool) throws(MatchingError) {
        guard !hasUnfinishedRequest else { throw secondRequest }
    }

    /// Whether the caller already holds the ride under way: a retry of their accept, answered with the ride.
    static func isAcceptRetry(_ ride: Ride, by driverId: UUID) -> Bool {
        ride.driver?.id == driverId && ride.status.isUnderway
    }

    /// A driver drives one ride at a time: 409 while they hold one under way.
    static func refuseSecondRide(hasRideUnderway: Bool) throws(MatchingError) {
        guard !hasRideUnderway else { throw secondRideUnderway }
    }

    /// Why a driver did not get a ride of their campus the conditional accept left alone: it is their own, it expired,
    /// or it is no longer open.
    static func refusalToAccept(isOwn: Bool, status: RideStatus, isExpired: Bool) -> MatchingError {
        if isOwn { return .conflict("You cannot accept your own ride request.") }
        guard status == .open else { return status.refusal(.accept) }
        return .conflict(isExpired ? "This ride request has expired." : "This ride request is no longer open.")
    }

    /// The driver as the rider is told of them when they accept: where they are only while they are online.
    static func rideDriver(_ driver: Driver) -> RideDriver {
        RideDriver(
            id: driver.userId, name: driver.name, car: driver.car, seats: driver.seats,
            position: driver.isOnline ? driver.position : nil)
    }

    /// Who `userId` is to a ride: its rider, its driver, or nil when neither.
    static func party(_ userId: UUID, riderId: UUID, driverId: UUID?) -> RideParty? {
        if userId == riderId { return .rider }
        if userId == driverId { return .driver }
        return nil
    }

    /// A cancel is the rider calling the ride off (`cancelled`) or the driver giving it up (`open` again, offered anew
    /// to everyone but them): either only before the ride has started (409).
    static func requireCancellable(by party: RideParty, from status: RideStatus) throws(MatchingError) {
        _ = try status.after(party == .rider ? .cancel : .giveUp)
    }

    /// The status a driver's step leaves: 409 when the caller is the rider, or the ride is not where that step follows.
    static func status(after step: RideStep, by party: RideParty, from status: RideStatus) throws(MatchingError)
        -> RideStatus
    {
        guard party == .driver else { throw .conflict("Only the ride's driver marks it \(step.rawValue).") }
        return try self.status(after: step, from: status)
    }

    /// The status a driver's step leaves, or 409 when the ride is not where that step follows.
    static func status(after step: RideStep, from status: RideStatus) throws(MatchingError) -> RideStatus {
        try status.after(.mark(step))
    }

    // MARK: Offers

    /// Round `number` (from 1) of offers: the radius doubles and the count grows by the first count each round; nil
    /// after the last round.
    static func offerRound(_ number: Int, settings: RideSettings) -> OfferRound? {
        guard number >= 1, number <= settings.offerRounds else { return nil }
        return OfferRound(
            number: number, radiusMeters: settings.offerRadiusMeters * pow(2, Double(number - 1)),
            count: settings.offerCount * number)
    }

    /// What offering a ride of `status` does `now`, after round `last` (0 before the first, and again after its
    /// driver gave it up): the next round, with the one after due an offer window later while there is one.
    static func offering(status: RideStatus, afterRound last: Int, now: Date, settings: RideSettings) -> RideOffering {
        guard status == .open else { return .nothing }
        guard let round = offerRound(last + 1, settings: settings) else { return .noMoreRounds }
        let isLastRound = offerRound(last + 2, settings: settings) == nil
        return .round(round, next: isLastRound ? nil : now.addingTimeInterval(settings.offerWindow))
    }
}
