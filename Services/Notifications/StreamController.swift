import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import Metrics
import ServiceKit

/// The caller's feed: live over one WebSocket (`/v1/stream?after=`), or by polling (`/v1/notifications`).
struct StreamController: Sendable {
    let repository: FeedPostgresRepository
    let marks: DeliveryMarks
    let hub: StreamHub
    let verifier: AccessTokenVerifier
    /// Sockets opened (`websocket_connections_total` on `/metrics`): the stream's upgrades pass no HTTP middleware.
    let connections: Metrics.Counter

    func addRoutes(to router: Router<ServiceRequestContext>) {
        let group = router.group().add(middleware: AuthenticationMiddleware(verifier: verifier))
        group.get("/v1/notifications", use: poll)
        // Reached when the upgrade was not asked for, or asked again without it after a refusal (the gateway does
        // that, since a refused upgrade gets a bare 400): a bad token answers 401 here, a bad `after` 400, and a
        // client that can connect is told to upgrade.
        router.group().add(middleware: AuthenticationMiddleware(verifier: verifier, acceptsQueryToken: true))
            .get("/v1/stream") { request, _ -> Response in
                _ = try FeedRules.after(request.uri.queryParameters.get("after"))
                throw Problem(
                    .upgradeRequired, detail: "Connect to /v1/stream with a WebSocket.",
                    headers: [.upgrade: "websocket"])
            }
    }

    func addStream(to router: Router<StreamRequestContext>) {
        router.ws("/v1/stream") { request, _ in
            // NB: the token and `after` are checked before the upgrade; a refusal is a bare 400 (the WebSocket
            // library writes it), which the gateway turns into the route above's problem.
            guard let token = request.streamToken, (try? await verifier.verify(token)) != nil,
                (try? FeedRules.after(request.uri.queryParameters.get("after"))) != nil
            else { return .dontUpgrade }
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            guard let token = context.request.streamToken, let identity = try? await verifier.verify(token) else {
                return
            }
            connections.increment()
            let after = (try? FeedRules.after(context.request.uri.queryParameters.get("after"))) ?? 0
            try await stream(
                identity.userId, after: after, inbound: inbound, outbound: outbound, logger: context.logger)
        }
    }

    /// Replays what the user missed after `after`, then sends live entries in order.
    private func stream(
        _ userId: UUID, after: Int64, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, logger: Logger
    ) async throws {
        let session = await hub.open(userId: userId)
        defer { hub.close(userId: userId, session: session.id) }
        let cursor = StreamCursor(
            userId: userId, lastSent: after, repository: repository, marks: marks, outbound: outbound)
        try await cursor.sendStored(through: nil)
        // Caught up: what follows is live. A client shows "catching up" until this frame, which has no seq of its own.
        try await outbound.write(.text(#"{"type":"stream.live","data":{"seq":\#(cursor.lastSent)}}"#))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await message in inbound.messages(maxSize: 16_384) {
                    guard case .text(let text) = message else { continue }
                    try await handleClientMessage(text, from: userId)
                }
            }
            group.addTask {
                for await frame in session.frames {
                    try await cursor.receive(frame)
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// `{"type":"typing","conversationId":"…"}`: passed on to the other members, not stored.
    private func handleClientMessage(_ text: String, from userId: UUID) async throws {
        struct ClientMessage: Decodable {
            var type: String
            var conversationId: UUID?
        }
        guard let message = try? JSONDecoder().decode(ClientMessage.self, from: Data(text.utf8)),
            message.type == "typing",
            let conversationId = message.conversationId
        else { return }
        let expiresAt = Date().addingTimeInterval(5).formatted(
            Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        let hint =
            #"{"type":"typing","data":{"conversationId":"\#(conversationId.uuidString)","userId":"\#(userId.uuidString)","expiresAt":"\#(expiresAt)"}}"#
        for member in try await repository.otherMembers(of: conversationId, besides: userId) {
            hub.sendHint(to: member, body: Data(hint.utf8))
        }
    }

    // MARK: HTTP

    /// `GET /v1/notifications?after=&limit=`: the same feed for polling clients.
    func poll(request: Request, context: ServiceRequestContext) async throws -> Response {
        let identity = try context.requireIdentity()
        let after = try FeedRules.after(request.uri.queryParameters.get("after"))
        let limit = try QueryParameters.limit(request.uri.queryParameters.get("limit"), default: 100, range: 1...500)
        let entries = try await repository.entries(of: identity.userId, after: after, limit: limit + 1)
        let page = entries.prefix(limit)
        var body = #"{"entries":["# + page.map(\.frame).joined(separator: ",") + "]"
        if entries.count > limit, let last = page.last { body += #","next":\#(last.seq)"# }
        body += "}"
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}

/// Where one socket is in its user's feed: every seq is sent once and in order, a gap in the live messages is
/// filled from the database, and a repeat is dropped. Used by one task at a time (replay, then live).
final class StreamCursor: @unchecked Sendable {
    let userId: UUID
    private(set) var lastSent: Int64
    let repository: FeedPostgresRepository
    let marks: DeliveryMarks
    let outbound: WebSocketOutboundWriter

    init(
        userId: UUID, lastSent: Int64, repository: FeedPostgresRepository, marks: DeliveryMarks,
        outbound: WebSocketOutboundWriter
    ) {
        self.userId = userId
        self.lastSent = lastSent
        self.repository = repository
        self.marks = marks
        self.outbound = outbound
    }

    /// Sends the stored entries after `lastSent`, up to `limit` when given.
    func sendStored(through limit: Int64?) async throws {
        let first = lastSent
        while true {
            let entries = try await repository.entries(of: userId, after: lastSent, limit: 200)
            for entry in entries where limit.map({ entry.seq <= $0 }) ?? true {
                try await outbound.write(.text(entry.frame))
                lastSent = entry.seq
            }
            if entries.count < 200 || limit.map({ lastSent >= $0 }) == true { break }
        }
        marks.mark(userId, after: first, through: lastSent)
    }

    /// A live message: a feed entry (with seq), or a hint that is passed on as it is.
    func receive(_ frame: Data) async throws {
        guard let seq = FeedEntry.seq(ofFrame: frame) else {
            try await outbound.write(.text(String(decoding: frame, as: UTF8.self)))
            return
        }
        guard seq > lastSent else { return }
        guard seq == lastSent + 1 else { return try await sendStored(through: seq) }
        try await outbound.write(.text(String(decoding: frame, as: UTF8.self)))
        marks.mark(userId, after: lastSent, through: seq)
        lastSent = seq
    }
}

/// The request context of the WebSocket upgrade.
struct StreamRequestContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
    }
}
