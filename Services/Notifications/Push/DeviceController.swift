import Foundation
import Hummingbird
import ServiceKit

/// The caller's devices, to push to when no socket of theirs is open, and the key browsers subscribe with.
struct DeviceController: Sendable {
    let repository: FeedPostgresRepository
    let verifier: AccessTokenVerifier
    /// nil when no VAPID key is configured: browsers cannot subscribe.
    let vapid: VAPIDIdentity?

    func addRoutes(to router: Router<ServiceRequestContext>) {
        let group = router.group().add(middleware: AuthenticationMiddleware(verifier: verifier))
        group.post("/v1/devices", use: register)
        group.get("/v1/devices", use: list)
        group.delete("/v1/devices/:id", use: delete)
        group.get("/v1/push/web", use: webKey)
    }

    struct DeviceRequest: Decodable {
        struct Subscription: Decodable {
            struct Keys: Decodable {
                var p256dh: String
                var auth: String
            }
            var endpoint: String
            var keys: Keys
        }
        var platform: String
        var token: String?
        var subscription: Subscription?
    }

    struct DeviceResponse: ResponseEncodable {
        var id: UUID
    }

    struct DeviceList: ResponseEncodable {
        var devices: [FeedPostgresRepository.DeviceSummary]
    }

    struct WebKey: ResponseEncodable {
        var publicKey: String
    }

    /// `POST /v1/devices {platform, token?, subscription?}`: an app's APNs or FCM token, or a browser's subscription.
    func register(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<DeviceResponse> {
        let identity = try context.requireIdentity()
        let input = try await request.decodeJSON(as: DeviceRequest.self, context: context)
        guard PushDevice.platforms.contains(input.platform) else {
            throw NotificationError.invalid(field: "platform", "platform is web, apns or fcm.")
        }
        // NB: a field the platform does not use is still refused when it is not as described, as any malformed input.
        if let subscription = input.subscription, subscription.endpoint.utf8.count > 2048 {
            throw NotificationError.invalid(field: "subscription.endpoint", "The endpoint is at most 2048 bytes.")
        }
        if let token = input.token, !(1...4096).contains(token.unicodeScalars.count) {
            throw NotificationError.invalid(field: "token", "token is 1 to 4096 characters.")
        }
        let (token, p256dh, auth): (String, Data?, Data?)
        if input.platform == "web" {
            guard let subscription = input.subscription else {
                throw NotificationError.invalid(field: "subscription", "A web device is its push subscription.")
            }
            let checked = try WebPushSubscription(
                endpoint: subscription.endpoint, p256dh: subscription.keys.p256dh, auth: subscription.keys.auth)
            (token, p256dh, auth) = (
                checked.endpoint.absoluteString, checked.publicKey.x963Representation, checked.authSecret
            )
        } else {
            // NB: its length was checked above, as any token's.
            guard let value = input.token,
                value.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 0x20 && $0.value < 0x7F })
            else {
                throw NotificationError.invalid(
                    field: "token", "token is the app's device token: 1 to 4096 visible ASCII characters.")
            }
            (token, p256dh, auth) = (value, nil, nil)
        }
        guard
            let id = try await repository.registerDevice(
                userId: identity.userId, platform: input.platform, token: token, p256dh: p256dh, auth: auth)
        else { throw NotificationError.accountDeleted }
        return EditedResponse(status: .created, response: DeviceResponse(id: id))
    }

    func list(request: Request, context: ServiceRequestContext) async throws -> DeviceList {
        DeviceList(devices: try await repository.devices(of: try context.requireIdentity().userId))
    }

    /// Another user's device, or none, is 404.
    func delete(request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        guard let id = context.parameters.get("id").flatMap(UUID.init(uuidString:)),
            try await repository.deleteDevice(id, of: identity.userId)
        else { throw Problem.notFound("No device of yours has this id.") }
        return .noContent
    }

    func webKey(request: Request, context: ServiceRequestContext) async throws -> WebKey {
        _ = try context.requireIdentity()
        guard let vapid else {
            throw Problem(.notFound, detail: "This server has no Web Push key (VAPID_PRIVATE_KEY).")
        }
        return WebKey(publicKey: vapid.publicKey)
    }
}
