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

    @Test func nearRadiusTextAndFlagsAreCheckedOneByOne() throws {
        let near = try QueryParameters.near("60.17, 24.95")

        #expect(near?.latitude == 60.17 && near?.longitude == 24.95)
        #expect(try QueryParameters.near(nil) == nil)
        #expect(try QueryParameters.radius(nil, default: 2000, range: 1...50_000) == 2000)
        #expect(try QueryParameters.radius("500", default: 2000, range: 1...50_000) == 500)
        #expect(try QueryParameters.text("  fazer   sininen ") == "fazer sininen")
        #expect(try QueryParameters.text("   ") == nil)
        #expect(try QueryParameters.flag("true", field: "mine") && !QueryParameters.flag(nil, field: "mine"))
        for bad in ["60.17", "95,24", "60.17,x", "60,24,1", "nan,24"] {
            #expect(throws: Problem.self) { try QueryParameters.near(bad) }
        }
        for bad in ["0", "50001", "x", "inf"] {
            #expect(throws: Problem.self) { try QueryParameters.radius(bad, default: 2000, range: 1...50_000) }
        }
        #expect(throws: Problem.self) { try QueryParameters.flag("yes", field: "mine") }
        #expect(throws: Problem.self) { try QueryParameters.text(String(repeating: "q", count: 101)) }
    }

    /// A length is counted as the OpenAPI documents count it: code points of the text as sent. Sixty letters with a
    /// combining accent each are 120, and white space folded away still counted.
    @Test func aTextsLengthIsItsCodePointsAsSent() throws {
        let accented = String(repeating: "e\u{301}", count: 60)

        #expect(accented.count == 60)
        #expect(throws: Problem.self) { try QueryParameters.text(accented) }
        #expect(throws: Problem.self) { try QueryParameters.text(String(repeating: "q ", count: 50) + " ") }
        #expect(try QueryParameters.text(String(repeating: "e\u{301}", count: 50)) != nil)
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
