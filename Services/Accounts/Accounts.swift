import ServiceKit

/// The accounts service: sign-up, login and tokens.
@main
struct Accounts {
    static func main() async {
        await ServiceMain.run(service: "accounts", defaultPort: 8081, build: buildApplication)
    }
}
