import Contracts
import Foundation
import Hummingbird
import Logging
import Messaging
import ServiceKit
import ServiceLifecycle

/// The calls API: TURN credentials, starting a call in an open conversation, answering, declining, hanging up, and
/// the WebRTC signals relayed to the other party as live frames. Parties only.
struct CallController: Sendable {
    let repository: CallPostgresRepository
    let turn: TurnSettings
    let live: LiveChannel

    func addRoutes(to router: Router<ServiceRequestContext>, verifier: AccessTokenVerifier) {
        let group = router.group("/v1/calls").add(middleware: AuthenticationMiddleware(verifier: verifier))
        group.get("ice-servers", use: iceServers)
        group.post(use: start)
        group.get("{id}", use: call)
        for verb in CallVerb.allCases {
            group.post("{id}/\(verb.rawValue)") { _, context in
                let userId = try context.requireIdentity().userId
                return try await repository.act(verb, callId: try context.callId(), userId: userId)
            }
        }
        group.post("{id}/signals", use: signal)
    }

    struct StartRequest: Decodable {
        /// The match whose conversation the call belongs to.
        var matchId: UUID
        var video: Bool?
    }

    func iceServers(request: Request, context: ServiceRequestContext) async throws -> IceServers {
        turn.iceServers(for: try context.requireIdentity().userId)
    }

    func start(request: Request, context: ServiceRequestContext) async throws -> EditedResponse<Call> {
        let caller = try context.requireIdentity()
        let input = try await request.decodeJSON(as: StartRequest.self, context: context)
        let call = try await repository.start(
            conversationId: input.matchId, caller: caller, video: input.video ?? false)
        return EditedResponse(status: .created, response: call)
    }

    func call(request: Request, context: ServiceRequestContext) async throws -> Call {
        try await repository.call(try context.callId(), of: try context.requireIdentity().userId)
    }

    /// Relays an offer, answer or candidate to the other party while the call rings or is under way; nothing is
    /// stored, and a frame lost on the way is the clients' to retry (ICE sends candidates again).
    func signal(request: Request, context: ServiceRequestContext) async throws -> HTTPResponse.Status {
        let sender = try context.requireIdentity().userId
        let callId = try context.callId()
        let signal = try await request.decodeJSON(as: CallSignal.self, context: context).validated()
        let receiver = try await repository.signalTarget(callId: callId, from: sender)
        let frame = CallSignalFrame(
            data: .init(callId: callId, from: sender, description: signal.description, candidate: signal.candidate))
        live.publish(routingKey: LiveFrames.routingKey(receiver), body: try frame.json())
        return .accepted
    }
}

extension ServiceRequestContext {
    /// The `{id}` of a call's path; one that is not a UUID names no call.
    func callId() throws -> UUID {
        guard let id = parameters.get("id").flatMap(UUID.init(uuidString:)) else { throw ChatError.callNotFound }
        return id
    }
}

/// Misses the calls that rang their time unanswered, every second, on every replica.
struct CallClock: Service {
    let repository: CallPostgresRepository
    let logger: Logger

    func run() async throws {
        while !Task.isShuttingDownGracefully {
            do {
                try await repository.ringOut()
            } catch {
                logger.warning("calls could not be rung out", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
