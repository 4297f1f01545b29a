import ServiceKit

/// The matching service: every flow that matches two students (delivery, tutoring, exchange, rides), over the read
/// models, timers and generic match they share.
@main
struct Matching {
    static func main() async {
        await ServiceMain.run(service: "matching", defaultPort: 8083) { try await buildApplication($0, logger: $1) }
    }
}
