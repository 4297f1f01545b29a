import ServiceKit

/// The notifications service: each user's durable feed, live over one WebSocket, by polling, or by push.
@main
struct Notifications {
    static func main() async {
        await ServiceMain.run(
            service: "notifications", defaultPort: 8085, build: { try await buildApplication($0, logger: $1) })
    }
}
