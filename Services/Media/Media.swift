import ServiceKit

/// The media service: students' images, checked, stripped of their metadata and kept with a small and a large
/// variant, readable by the students of the owner's campus.
@main
struct Media {
    static func main() async {
        await ServiceMain.run(service: "media", defaultPort: 8086, build: buildApplication)
    }
}
