import Contracts
import Foundation
import Hummingbird
import ServiceKit

/// The chat API: the caller's conversations, their history, sending and read markers. Members only.
struct ConversationController: Sendable {
    let repository: ConversationPostgresRepository

    func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        router.group("/v1/conversations")
            .add(middleware: AuthenticationMiddleware(verifier: verifier))
            .get(use: list)
            .get("{id}/messages", use: history)
            .post("{id}/messages", use: send)
            .post("{id}/read", use: markRead)
    }

    struct ConversationList: ResponseEncodable {
        var conversations: [ConversationSummary]
    }

    struct MessagePage: ResponseEncodable {
        var messages: [Message]
        /// The `before` cursor of the next (older) page, when there is one.
        var next: UUID?
    }

    struct SendRequest: Decodable {
        var id: UUID
        var text: String
    }

    struct ReadRequest: Decodable {
        var messageId: UUID
    }

    func list(request: Request, context: ServiceRequestContext) async throws -> ConversationList {
        ConversationList(
            conversations: try await repository.openConversations(of: try context.requireIdentity().userId))
    }

    func history(request: Request, context: ServiceRequestContext) async throws -> MessagePage {
        let identity = try context.requireIdentity()
        let limit = try QueryParameters.limit(
            request.uri.queryParameters.get("limit"), default: 50, range: 1...ChatRules.maxPageSize)
        let before = try ChatRules.cursor(request.uri.queryParameters.get("before"))
        let messages = try await repository.messages(
            conversationId: try context.conversationId(), of: identity.userId, before: before, limit: limit + 1)
        return MessagePage(
            messages: Array(messages.prefix(limit)), next: messages.count > limit ? messages[limit - 1].id : nil)
    }

    func send(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Message> {
        let identity = try context.requireIdentity()
        let input = try await request.decodeJSON(as: SendRequest.self, context: context)
        let (message, isNew) = try await repository.send(
            id: input.id, conversationId: try context.conversationId(), sender: identity.userId,
            senderName: identity.name, text: try ChatRules.text(input.text))
        return EditedResponse(status: isNew ? .created : .ok, response: message)
    }

    func markRead(request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        let identity = try context.requireIdentity()
        let input = try await request.decodeJSON(as: ReadRequest.self, context: context)
        try await repository.markRead(
            conversationId: try context.conversationId(), userId: identity.userId, messageId: input.messageId)
        return .noContent
    }
}

extension ServiceRequestContext {
    /// The `{id}` of the path; one that is not a UUID names no conversation.
    func conversationId() throws -> UUID {
        guard let id = parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw ChatError.notFound }
        return id
    }
}

extension Message: ResponseGenerator {
    /// The message as `ServiceJSON.encoder` writes it (keys sorted, times with fractions of a second), written
    /// directly: chat answers every message sent with one.
    var json: [UInt8] {
        var object = JSONObjectWriter()
        object.add("conversationId", conversationId)
        object.add("id", id)
        object.add("removed", removed)
        object.add("senderId", senderId)
        object.add("sentAt", sentAt, ServiceJSON.timeStyle)
        object.add("text", text)
        return object.finished()
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = ByteBuffer(bytes: json)
        return Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8", .contentLength: "\(body.readableBytes)"],
            body: .init(byteBuffer: body))
    }
}
