import Contracts
import Foundation
import Hummingbird
import ServiceKit

/// A student the caller blocked, as `GET /v1/blocks` lists them.
struct Block: Codable, Sendable, Equatable, ResponseEncodable {
    var userId: UUID
    var name: String
    var createdAt: Date
}

/// Blocks: a student blocks another of their campus, and neither sees the other in any flow from then on. The
/// other services learn of it from `user.blocked` and `user.unblocked`.
struct BlockController: Sendable {
    let repository: AccountPostgresRepository
    let verifier: AccessTokenVerifier

    func addRoutes(to router: Router<ServiceRequestContext>) {
        let group = router.group("/v1/blocks").add(middleware: AuthenticationMiddleware(verifier: verifier))
        group.get(use: list)
        group.post(use: block)
        group.delete("{userId}", use: unblock)
    }

    struct BlockRequest: Decodable {
        var userId: UUID
    }

    struct BlockList: ResponseEncodable {
        var blocks: [Block]
    }

    func list(request: Request, context: ServiceRequestContext) async throws -> BlockList {
        BlockList(blocks: try await repository.blocks(of: try context.requireIdentity().userId))
    }

    func block(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Block> {
        let caller = try context.requireIdentity()
        let input = try await request.decodeJSON(as: BlockRequest.self, context: context)
        guard input.userId != caller.userId else {
            throw AccountError.invalid(field: "userId", "You cannot block yourself.")
        }
        let (block, isNew) = try await repository.block(input.userId, by: caller)
        return EditedResponse(status: isNew ? .created : .ok, response: block)
    }

    func unblock(request: Request, context: ServiceRequestContext) async throws -> Response {
        let caller = try context.requireIdentity()
        guard let raw = context.parameters.get("userId"), let userId = UUID(uuidString: raw) else {
            throw AccountError.invalid(field: "userId", "userId is a user's id.")
        }
        try await repository.unblock(userId, by: caller.userId)
        return Response(status: .noContent)
    }
}
