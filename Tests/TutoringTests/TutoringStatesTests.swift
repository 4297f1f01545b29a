import Contracts
import Foundation
import TestSupport
import Testing

@testable import MatchingCore
@testable import Tutoring

/// The tutoring flow's rules of swiping and matching, without a database.
@Suite struct TutoringStatesTests {
    let student = Swiper(userId: UUID(), name: "Aino", role: .student, courses: ["MAT-101", "PHYS-102", "CS-110"])
    let tutor = Swiper(userId: UUID(), name: "Matti", role: .tutor, courses: ["CS-110", "MAT-101"])

    @Test func matchTransitions() {
        expectTransitions([(TutoringMatchStatus.active, TutoringMatchStatus.Action.unmatch, .unmatched)]) {
            try $0.after($1)
        }
        #expect(throws: MatchingError.notFound("match")) { try TutoringMatchStatus.unmatched.after(.unmatch) }
    }

    @Test func onlyALikeLikedBackMakesAMatchTheSameWhoeverSwipedLast() throws {
        let made = try #require(TutoringRules.match(of: student, with: tutor, likes: true, isLikedBack: true))
        let mirrored = try #require(TutoringRules.match(of: tutor, with: student, likes: true, isLikedBack: true))

        #expect(made.members.map(\.userId) == mirrored.members.map(\.userId))
        #expect(Set(made.members.map(\.role)) == ["student", "tutor"])
        #expect(made.courses == ["MAT-101", "CS-110"])
        #expect(mirrored.courses == ["CS-110", "MAT-101"])
        for (likes, isLikedBack) in [(false, true), (true, false), (false, false)] {
            #expect(TutoringRules.match(of: student, with: tutor, likes: likes, isLikedBack: isLikedBack) == nil)
        }
    }

    @Test func onlySomeoneElseOfTheOppositeRoleIsSwiped() throws {
        var otherStudent = student
        otherStudent.userId = UUID()

        try TutoringRules.requireSwipable(tutor, by: student)
        try TutoringRules.requireSwipable(student, by: tutor)
        #expect(throws: MatchingError.notFound("card")) { try TutoringRules.requireSwipable(otherStudent, by: student) }
        #expect(throws: MatchingError.notFound("card")) { try TutoringRules.requireSwipable(student, by: student) }
    }
}
