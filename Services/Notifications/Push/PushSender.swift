import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import ServiceKit

/// One device of a user: a browser's push subscription, or an app's APNs or FCM token.
struct PushDevice: Sendable, Equatable {
    static let platforms = ["web", "apns", "fcm"]

    var id: UUID
    var platform: String
    /// The APNs or FCM token; for the web, the subscription's endpoint.
    var token: String
    /// The web subscription's keys.
    var p256dh: Data?
    var auth: Data?
}

/// What a push says and how long it is worth sending.
struct PushMessage: Sendable, Equatable {
    var type: String
    var seq: Int64
    var title: String
    var body: String
    /// The client's screen to open, e.g. `#/chats/<id>`.
    var open: String?
    /// Seconds the push service may keep it for a device that is away; 0: now or never.
    var timeToLive: Int
    /// Pushes of one key replace each other on the device (a conversation's newest message).
    var collapseKey: String?
    /// Time-critical (an offer waiting for an answer).
    var isUrgent: Bool
    /// The number of the user's open conversations with unread messages, for the app's icon.
    var badge: Int? = nil

    /// The JSON a browser is given.
    var payload: Data {
        var object: [String: Any] = ["type": type, "seq": seq, "title": title, "body": body]
        object["open"] = open
        object["badge"] = badge
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }
}

/// What became of one push to one device.
enum PushOutcome: Sendable, Equatable {
    case sent
    /// The device is no more (unsubscribed, uninstalled): it is deleted.
    case gone
    /// Refused for now (429, 5xx, no answer): tried again while the push is worth sending; `after` when the service
    /// said when.
    case retry(after: TimeInterval?)
    /// Refused for good (a malformed request, a payload too large): not tried again.
    case failed(String)
    /// No sender is configured for the device's platform.
    case unsupported

    /// Its name on `/metrics`.
    var label: String {
        switch self {
        case .sent: "sent"
        case .gone: "gone"
        case .retry: "retry"
        case .failed: "failed"
        case .unsupported: "unsupported"
        }
    }
}

/// Hands a push to a device's push service.
protocol PushSender: Sendable {
    func send(_ message: PushMessage, to device: PushDevice) async -> PushOutcome
}

/// Sends each push to its platform's sender, each there when it is configured; a device of a platform with none is
/// kept, and its pushes counted as `unsupported`.
struct PlatformPushSender: PushSender {
    var web: WebPushSender?
    var apns: APNsSender?
    var fcm: FCMSender?

    func send(_ message: PushMessage, to device: PushDevice) async -> PushOutcome {
        let sender: (any PushSender)? =
            switch device.platform {
            case "web": web
            case "apns": apns
            case "fcm": fcm
            default: nil
            }
        return await sender?.send(message, to: device) ?? .unsupported
    }
}

/// Web Push (RFC 8030) with an encrypted payload (RFC 8291) and the server's VAPID identity (RFC 8292).
struct WebPushSender: PushSender {
    let identity: VAPIDIdentity
    let client: HTTPClient
    let logger: Logger

    func send(_ message: PushMessage, to device: PushDevice) async -> PushOutcome {
        // NB: what registration checked, kept as bytes; a row that no longer reads as a key is of no use.
        guard let url = URL(string: device.token), let p256dh = device.p256dh, let auth = device.auth,
            let key = try? P256.KeyAgreement.PublicKey(x963Representation: p256dh)
        else { return .gone }
        let subscription = WebPushSubscription(endpoint: url, publicKey: key, authSecret: auth)
        do {
            var payload = message.payload
            if payload.count > WebPushEncryption.maxPayload {
                var shorter = message
                shorter.body = String(message.body.prefix(200))
                payload = shorter.payload
            }
            var request = HTTPClientRequest(url: url.absoluteString)
            request.method = .POST
            request.headers.add(name: "TTL", value: String(message.timeToLive))
            request.headers.add(name: "Content-Encoding", value: "aes128gcm")
            request.headers.add(name: "Content-Type", value: "application/octet-stream")
            request.headers.add(name: "Urgency", value: message.isUrgent ? "high" : "normal")
            if let topic = message.collapseKey { request.headers.add(name: "Topic", value: topic) }
            request.headers.add(name: "Authorization", value: try await identity.authorization(for: url))
            request.body = .bytes(
                ByteBuffer(bytes: try WebPushEncryption.encrypt(payload, for: subscription)))
            let response = try await client.execute(request, timeout: .seconds(30))
            let status = response.status.code
            let retryAfter = response.headers.first(name: "Retry-After").flatMap(TimeInterval.init)
            _ = try? await response.body.collect(upTo: 64 * 1024)
            switch status {
            case 200..<300: return .sent
            case 404, 410: return .gone
            case 429, 500..<600: return .retry(after: retryAfter)
            default: return .failed("the push service answered \(status)")
            }
        } catch {
            return .retry(after: nil)
        }
    }
}
