import Contracts
import Foundation
import MatchingCore

/// The tutoring flow's rules of swiping and matching, without I/O.

/// Where a tutor and a student's match is.
enum TutoringMatchStatus: String, Sendable, CaseIterable {
    case active
    /// One of them ended it; the pair never meets in the feed again.
    case unmatched

    enum Action: Sendable, CaseIterable { case unmatch }

    /// NB: a match that is over is gone to its members, so ending it again is 404, not 409.
    func after(_ action: Action) throws(MatchingError) -> TutoringMatchStatus {
        switch (self, action) {
        case (.active, .unmatch): .unmatched
        default: throw .notFound("match")
        }
    }
}

/// One side of a swipe: who, as what, with which courses.
struct Swiper: Sendable, Equatable {
    var userId: UUID
    var name: String
    var role: TutoringRole
    var courses: [String]
}

extension TutoringRules {
    /// Who may be swiped on: someone else of the opposite role (the feed shows only them).
    static func requireSwipable(_ target: Swiper, by swiper: Swiper) throws(MatchingError) {
        guard target.userId != swiper.userId, target.role == swiper.role.opposite else { throw .notFound("card") }
    }

    /// The match a swipe makes: a like that meets the other's like does; a pass, or a like not (yet) returned, does
    /// not. Its members in the order of their ids (so that either swipe makes the same pair), and the courses they
    /// share, in the swiper's order.
    static func match(of swiper: Swiper, with target: Swiper, likes: Bool, isLikedBack: Bool)
        -> (members: [MatchMember], courses: [String])?
    {
        guard likes, isLikedBack else { return nil }
        let members = [swiper, target].map { MatchMember(userId: $0.userId, name: $0.name, role: $0.role.rawValue) }
            .sorted { $0.userId.uuidString.lowercased() < $1.userId.uuidString.lowercased() }
        let theirs = Set(target.courses)
        return (members, swiper.courses.filter(theirs.contains))
    }
}
