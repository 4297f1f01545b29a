import ServiceKit

/// The chat service: a conversation per match of any flow, between its members, until the match ends.
@main
struct Chat {
    static func main() async {
        await ServiceMain.run(service: "chat", defaultPort: 8084, build: buildApplication)
    }
}
