import Crypto
import Foundation
import ServiceKit
import Testing

@testable import Notifications

/// What a push says, and Web Push's encryption and VAPID token, without I/O. The system tests send real pushes to a
/// push service on loopback that checks them with an implementation of its own.
@Suite struct PushTests {
    @Test func aMessageSaysItsSenderAndTextAndCollapsesWithItsConversation() {
        let conversation = UUID()
        let text = String(repeating: "é", count: 150)
        let data = #"{"conversationId":"\#(conversation)","senderName":"Olli Virtanen","text":"\#(text)"}"#
        let message = PushContent.message(type: "message.sent", seq: 7, dataJSON: data)

        #expect(message.title == "Olli" && message.body == String(repeating: "é", count: 100))
        #expect(message.open == "#/chats/\(conversation.uuidString.lowercased())")
        #expect(message.collapseKey?.count == 32 && message.isUrgent == false)
        #expect(message.timeToLive == PushContent.defaultTimeToLive)
    }

    @Test func anEntryAwaitingAnAnswerIsUrgentAndDiesWithItsWindowAndItsNoticeIsWhatItSays() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let expiresAt = now.addingTimeInterval(60).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        let data = #"{"expiresAt":"\#(expiresAt)","notice":{"title":"A question","body":"60 s to answer"}}"#
        let message = PushContent.message(type: "thing.asked", seq: 1, dataJSON: data, now: now)
        let late = PushContent.message(type: "thing.asked", seq: 1, dataJSON: data, now: now.addingTimeInterval(90))
        let plain = PushContent.message(type: "thing.was_done", seq: 2, dataJSON: "{}", now: now)

        #expect(message.timeToLive == 60 && message.isUrgent)
        #expect(message.title == "A question" && message.body == "60 s to answer")
        #expect(late.timeToLive == 0)
        #expect(plain.title == "Tarrare" && plain.body == "Thing was done" && plain.open == nil)
        let payload = try #require(try JSONSerialization.jsonObject(with: message.payload) as? [String: Any])
        #expect(payload["seq"] as? Int == 1 && payload["type"] as? String == "thing.asked")
    }

    @Test func aPushIsOneAes128gcmRecordThatOnlyTheBrowsersKeysOpen() throws {
        let browser = P256.KeyAgreement.PrivateKey()
        let auth = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        let subscription = WebPushSubscription(
            endpoint: URL(string: "https://push.example.org/abc")!, publicKey: browser.publicKey, authSecret: auth)
        let plaintext = Data(#"{"title":"Hei"}"#.utf8)
        let body = try WebPushEncryption.encrypt(plaintext, for: subscription)

        // The header: salt, record size, the server's one-time key (RFC 8188 §2.1).
        let salt = body.prefix(16)
        #expect(body[16..<20].elementsEqual([0, 0, 0x10, 0]) && body[20] == 65)
        let serverKey = try P256.KeyAgreement.PublicKey(x963Representation: body[21..<86])
        // The browser's side of RFC 8291 §3.4, from its own private key.
        let shared = try browser.sharedSecretFromKeyAgreement(with: serverKey)
        let keyInfo =
            Data("WebPush: info".utf8) + [0] + browser.publicKey.x963Representation + serverKey.x963Representation
        let inputKey = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: auth, sharedInfo: keyInfo, outputByteCount: 32)
        let contentKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKey, salt: salt, info: Data("Content-Encoding: aes128gcm".utf8) + [0],
            outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKey, salt: salt, info: Data("Content-Encoding: nonce".utf8) + [0],
            outputByteCount: 12
        ).withUnsafeBytes { Data($0) }
        let record = body.dropFirst(86)
        let opened = try AES.GCM.open(
            AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce), ciphertext: record.dropLast(16), tag: record.suffix(16)),
            using: contentKey)

        #expect(opened == plaintext + [2])
        // Another browser's keys open nothing.
        let stranger = WebPushSubscription(
            endpoint: subscription.endpoint, publicKey: P256.KeyAgreement.PrivateKey().publicKey, authSecret: auth)
        #expect(try WebPushEncryption.encrypt(plaintext, for: stranger) != body)
    }

    @Test func aSubscriptionThatCannotWorkIsRefusedNamingItsField() {
        let key = P256.KeyAgreement.PrivateKey().publicKey.x963Representation.base64URLEncoded
        let auth = Data(repeating: 1, count: 16).base64URLEncoded
        for (endpoint, p256dh, secret, field) in [
            ("http://push.example.org/x", key, auth, "subscription.endpoint"),
            ("ftp://127.0.0.1/x", key, auth, "subscription.endpoint"),
            ("https://push.example.org/x", "AAAA", auth, "subscription.keys.p256dh"),
            (
                "https://push.example.org/x", key, Data(repeating: 1, count: 8).base64URLEncoded,
                "subscription.keys.auth"
            ),
        ] {
            #expect {
                try WebPushSubscription(endpoint: endpoint, p256dh: p256dh, auth: secret)
            } throws: { error in
                guard case .invalid(let named, _) = error as? NotificationError else { return false }
                return named == field
            }
        }
        #expect((try? WebPushSubscription(endpoint: "http://127.0.0.1:9/x", p256dh: key, auth: auth)) != nil)
    }

    @Test func theVAPIDTokenIsSignedForTheEndpointsOriginWithTheKeyBrowsersSubscribeWith() async throws {
        let key = P256.Signing.PrivateKey()
        let identity = try await VAPIDIdentity(privateKeyPEM: key.pemRepresentation, subject: "mailto:ops@example.org")
        let now = Date()
        let header = try await identity.authorization(
            for: URL(string: "https://push.example.org:8443/send/abc")!, now: now)

        let parts = header.dropFirst("vapid t=".count).split(separator: ",")
        let token = String(parts[0])
        #expect(
            parts[1].trimmingCharacters(in: .whitespaces) == "k=\(key.publicKey.x963Representation.base64URLEncoded)")
        let pieces = token.split(separator: ".").map(String.init)
        let claimsJSON = try #require(Data(base64URLEncoded: pieces[1]))
        let claims = try #require(try JSONSerialization.jsonObject(with: claimsJSON) as? [String: Any])
        #expect(claims["aud"] as? String == "https://push.example.org:8443")
        #expect(claims["sub"] as? String == "mailto:ops@example.org")
        let expires = try #require(claims["exp"] as? Double)
        #expect(expires > now.timeIntervalSince1970 && expires <= now.timeIntervalSince1970 + 24 * 3600)
        let signatureBytes = try #require(Data(base64URLEncoded: pieces[2]))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        #expect(key.publicKey.isValidSignature(signature, for: Data("\(pieces[0]).\(pieces[1])".utf8)))
    }

    @Test func anAppsPushCarriesTheBadgeAndWhatToOpenInEachPlatformsShape() throws {
        let conversation = UUID()
        var message = PushContent.message(
            type: "message.sent", seq: 9,
            dataJSON: #"{"conversationId":"\#(conversation)","senderName":"Olli V","text":"Hi"}"#, badge: 3)
        message.timeToLive = 0

        let apns = try #require(
            try JSONSerialization.jsonObject(with: APNsSender.payload(of: message)) as? [String: Any])
        let aps = try #require(apns["aps"] as? [String: Any])
        #expect(aps["badge"] as? Int == 3 && (aps["alert"] as? [String: String]) == ["title": "Olli", "body": "Hi"])
        #expect(apns["open"] as? String == "#/chats/\(conversation.uuidString.lowercased())")
        #expect(apns["seq"] as? Int == 9)
        let fcm = try #require(
            try JSONSerialization.jsonObject(with: FCMSender.body(of: message, token: "t1")) as? [String: Any])
        let inner = try #require(fcm["message"] as? [String: Any])
        // NB: FCM's data are strings only.
        let data = try #require(inner["data"] as? [String: String])
        #expect(data["badge"] == "3" && data["seq"] == "9")
        let android = try #require(inner["android"] as? [String: Any])
        #expect(android["ttl"] as? String == "0s" && android["priority"] as? String == "NORMAL")
        #expect(android["collapse_key"] as? String == message.collapseKey && inner["token"] as? String == "t1")
    }

    @Test func theAPNsProviderTokenIsTheTeamsSignedWithTheKeyIdAndKeptForFortyMinutes() async throws {
        let key = P256.Signing.PrivateKey()
        let settings = APNsSettings(
            url: URL(string: "https://127.0.0.1:9")!, keyPEM: key.pemRepresentation, keyId: "KEY123", teamId: "TEAM9",
            topic: "fi.tarrare.app")
        let provider = try await APNsProviderToken(settings: settings)
        let now = Date()
        let token = try await provider.token(now: now)

        let pieces = token.split(separator: ".").map(String.init)
        let (headerJSON, claimsJSON, signatureBytes) = (
            try #require(Data(base64URLEncoded: pieces[0])), try #require(Data(base64URLEncoded: pieces[1])),
            try #require(Data(base64URLEncoded: pieces[2]))
        )
        let header = try #require(try JSONSerialization.jsonObject(with: headerJSON) as? [String: Any])
        let claims = try #require(try JSONSerialization.jsonObject(with: claimsJSON) as? [String: Any])
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "KEY123")
        #expect(claims["iss"] as? String == "TEAM9")
        #expect(claims["iat"] as? Double == now.timeIntervalSince1970.rounded(.down))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        #expect(key.publicKey.isValidSignature(signature, for: Data("\(pieces[0]).\(pieces[1])".utf8)))
        #expect(try await provider.token(now: now.addingTimeInterval(39 * 60)) == token)
        #expect(try await provider.token(now: now.addingTimeInterval(41 * 60)) != token)
    }

    @Test func pushesThatAskAtOnceShareOneProviderToken() async throws {
        let settings = APNsSettings(
            url: URL(string: "https://127.0.0.1:9")!, keyPEM: P256.Signing.PrivateKey().pemRepresentation, keyId: "K",
            teamId: "T", topic: "t")
        let provider = try await APNsProviderToken(settings: settings)

        // NB: ES256 signatures differ each time: two tokens signed would differ.
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try await provider.token() } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }

        #expect(tokens.count == 1)
    }

    @Test func aPushServiceIsHttpsOrOnLoopbackAndAKeyThatIsNoKeyIsNamed() async throws {
        func url(_ value: String) throws -> URL { try pushServiceURL(value, variable: "APNS_URL") }
        #expect(try url("https://api.sandbox.push.apple.com").host == "api.sandbox.push.apple.com")
        #expect(try url("http://127.0.0.1:2197").port == 2197)
        #expect(throws: ConfigurationError.self) { try url("http://push.example.org") }
        let settings = APNsSettings(
            url: URL(string: "https://x")!, keyPEM: "not a key", keyId: "K", teamId: "T", topic: "t")
        await #expect(throws: ConfigurationError.self) { try await APNsProviderToken(settings: settings) }
        #expect(throws: ConfigurationError.self) {
            try FCMSettings.read(EnvironmentReader(values: ["FCM_SERVICE_ACCOUNT": #"{"project_id":"p"}"#]))
        }
    }
}
