import Foundation
import MatchingCore

/// The ride code, without I/O: four digits drawn when a driver accepts a ride, shown to its rider only; the driver
/// enters it to start the ride, so that the rider gets into the car of the driver who accepted them. The fifth wrong
/// code cancels the ride.
enum RideCode {
    /// How many wrong codes a ride takes: the last of them cancels it.
    static let wrongCodesAllowed = 5

    /// What a code the driver enters does.
    enum Check: Sendable, Equatable {
        /// The rider's code: the ride starts.
        case right
        /// Not the rider's; `triesLeft` more may be tried.
        case wrong(triesLeft: Int)
        /// Not the rider's, and the last wrong code the ride takes: it is cancelled.
        case refused
    }

    /// Four digits, 0000 to 9999, each as likely, from `generator`.
    static func draw<Generator: RandomNumberGenerator>(using generator: inout Generator) -> String {
        digits(Int.random(in: 0...9999, using: &generator))
    }

    /// `number` (0 to 9999) as four digits: 7 is "0007".
    static func digits(_ number: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    /// Four digits from the system's cryptographically secure generator.
    static func draw() -> String {
        var generator = SystemRandomNumberGenerator()
        return draw(using: &generator)
    }

    /// The code a request gives: a string of exactly four digits 0–9, else 400 naming `code`.
    static func validated(_ raw: String?) throws(MatchingError) -> String {
        guard let raw else {
            throw .invalid(field: "code", "code is required: the four digits the rider's app shows.")
        }
        guard raw.utf8.count == 4, raw.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw .invalid(field: "code", "code is the rider's four digits, such as \"0427\".")
        }
        return raw
    }

    /// What `given` does to a ride whose code is `code` and which took `wrongSoFar` wrong codes already.
    static func check(_ given: String, against code: String?, wrongSoFar: Int) -> Check {
        if let code, given == code { return .right }
        let triesLeft = wrongCodesAllowed - (wrongSoFar + 1)
        return triesLeft > 0 ? .wrong(triesLeft: triesLeft) : .refused
    }

    /// The 409 of a code that is not the rider's: how many tries are left, or that the ride is cancelled.
    static func refusal(_ check: Check) -> MatchingError? {
        switch check {
        case .right: nil
        case .wrong(let left):
            .conflict(
                "The code is not the rider's; \(left) \(left == 1 ? "try" : "tries") left before the ride is cancelled."
            )
        case .refused:
            .conflict(
                "The code is not the rider's, \(wrongCodesAllowed) times: the ride is cancelled and the rider is told.")
        }
    }

    /// A ride that five wrong codes cancelled starts no more, whatever code comes next.
    static let cancelledForWrongCodes = MatchingError.conflict(
        "This ride was cancelled after \(wrongCodesAllowed) wrong codes; it can no longer start.")
}
