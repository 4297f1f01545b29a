import Foundation
import Testing

@testable import TarrareClient

/// Where a session is kept between launches on Linux, and what the client reads of an access token.
struct TokenStoreTests {
    @Test func aFileKeepsTheTokensForItsOwnerAloneAndForgetsThemOnSignOut() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID().uuidString).json")
        let store = FileTokenStore(url: url)
        #expect(try store.load() == nil)
        let tokens = Tokens(accessToken: "a.b.c", refreshToken: "r", userId: "u")
        try store.save(tokens)
        #expect(try FileTokenStore(url: url).load() == tokens)
        let permissions = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        try store.save(nil)
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    @Test func theAccessTokensExpiryIsItsExpClaim() {
        let payload = Data(#"{"exp":1800000000.5,"sub":"u"}"#.utf8).base64EncodedString()
            .replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
        let tokens = Tokens(accessToken: "header.\(payload).signature", refreshToken: "r", userId: "u")
        #expect(tokens.accessExpires == Date(timeIntervalSince1970: 1_800_000_000.5))
        #expect(Tokens(accessToken: "not a token", refreshToken: "r", userId: "u").accessExpires == nil)
    }
}
