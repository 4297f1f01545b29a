import Testing

@testable import ServiceKit

/// The list parameters every flow shares: a page size and an opaque cursor.
@Suite struct QueryParametersTests {
    @Test func aLimitIsWithinItsRangeOrItsDefault() throws {
        #expect(try QueryParameters.limit(nil) == 20)
        #expect(try QueryParameters.limit("50") == 50)
        #expect(try QueryParameters.limit(nil, default: 100, range: 1...500) == 100)
        for bad in ["0", "51", "x", "", "2.5"] {
            #expect(throws: Problem.invalid("limit", "limit is a number from 1 to 50.")) {
                try QueryParameters.limit(bad)
            }
        }
    }

    @Test func aCursorGivesBackItsFieldsAndRefusesWhatItDidNotWrite() throws {
        let text = PageCursor.text(["nearest", "12.5", "", "a|b"])

        #expect(try PageCursor.fields(PageCursor.text(["2", "x"]), count: 2) == ["2", "x"])
        #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
        for bad in ["not base64!", PageCursor.text(["one"]), "2.x.y"] {
            #expect(throws: Problem.self) { try PageCursor.fields(bad, count: 2) }
        }
    }
}
