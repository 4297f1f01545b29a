import Testing

@testable import ServiceKit

/// Matching's OpenAPI description is its own document with each flow's part added.
@Suite struct OpenAPIPartsTests {
    let document = """
        openapi: 3.1.0
        paths:
          /health/live:
            get:
              summary: Alive.
        components:
          parameters:
            Id: { name: id, in: path, required: true }
          schemas:
            Point: { type: object }

        """
    let part = """
        # A flow's part.
        paths:
          /v1/duets:
            post:
              summary: Pairs two singers.
        components:
          schemas:
            Duet:
              type: object
          responses:
            Sung: { description: Sung. }
        """

    @Test func aPartsPathsAndComponentsJoinTheDocumentsSections() throws {
        let merged = try OpenAPIDocument.merging(document, parts: [part])

        #expect(OpenAPICoverage.operations(in: merged) == ["GET /health/live", "POST /v1/duets"])
        #expect(merged.contains("  schemas:\n    Point: { type: object }\n    Duet:\n      type: object"))
        #expect(merged.contains("  responses:\n    Sung: { description: Sung. }"))
        #expect(!merged.contains("# A flow's part."))
    }

    @Test func aPathTwiceIsAnError() {
        let twice = "paths:\n  /health/live:\n    get:\n      summary: Again.\n"

        #expect(throws: ConfigurationError.self) { try OpenAPIDocument.merging(document, parts: [twice]) }
    }
}
