// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "tarrare",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        // The Swift client of the seed apps: the typed calls of the whole API (TarrareAPI, generated) and the session,
        // retries and live feed an app needs (TarrareClient).
        .library(name: "TarrareClient", targets: ["TarrareClient", "TarrareAPI"]),
        .executable(name: "accounts", targets: ["Accounts"]),
        .executable(name: "places", targets: ["Places"]),
        .executable(name: "matching", targets: ["Matching"]),
        .executable(name: "chat", targets: ["Chat"]),
        .executable(name: "notifications", targets: ["Notifications"]),
        .executable(name: "media", targets: ["Media"]),
        .executable(name: "load", targets: ["LoadGenerator"]),
        .executable(name: "delivery-simulation", targets: ["DeliverySimulation"]),
        .executable(name: "places-benchmark", targets: ["PlacesBenchmark"]),
        .executable(name: "tutoring-benchmark", targets: ["TutoringBenchmark"]),
        .executable(name: "media-benchmark", targets: ["MediaBenchmark"]),
        .executable(name: "exchange-benchmark", targets: ["ExchangeBenchmark"]),
        .executable(name: "rides-benchmark", targets: ["RidesBenchmark"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession.git", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // NB: OTLP over HTTP only: the gRPC exporter would build gRPC too.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        // MARK: C libraries
        .systemLibrary(
            name: "CLibPQ", path: "Shared/CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(
            name: "CRabbitMQ", path: "Shared/CRabbitMQ", pkgConfig: "librabbitmq",
            providers: [.apt(["librabbitmq-dev"])]),
        .systemLibrary(
            name: "CCrypt", path: "Shared/CCrypt", pkgConfig: "libcrypt", providers: [.apt(["libcrypt-dev"])]),
        // SMTP with STARTTLS and AUTH, for accounts' mail.
        .systemLibrary(
            name: "CCurl", path: "Shared/CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CVips", path: "Shared/CVips", pkgConfig: "vips", providers: [.apt(["libvips-dev"])]),

        // MARK: Shared
        .target(
            name: "Postgres",
            dependencies: [
                "CLibPQ", .logging, .nioPosix, .nioConcurrency, .serviceLifecycle,
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Shared/Postgres"),
        .target(
            name: "Messaging",
            dependencies: [
                "CRabbitMQ", "Postgres", "Contracts", .logging, .nioPosix, .nioConcurrency, .serviceLifecycle,
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Shared/Messaging", resources: [.copy("Migrations")]),
        .target(name: "Contracts", path: "Shared/Contracts"),
        .target(
            name: "ServiceKit",
            dependencies: [
                "Postgres", "Messaging", .hummingbird, .logging, .serviceLifecycle, .nioConcurrency,
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
            ],
            path: "Shared/ServiceKit", resources: [.copy("campuses.json")]),

        // MARK: Services
        .executableTarget(
            name: "Accounts",
            dependencies: [
                "ServiceKit", "Postgres", "Messaging", "Contracts", "CCrypt", "CCurl", .hummingbird, .nioPosix,
                .argumentParser, .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Services/Accounts", resources: [.copy("Migrations"), .copy("openapi.yaml")]),

        // Places: the executable serves and imports; the catalog (reading GeoJSON, storing and searching places) is a
        // library that the benchmark shares.
        .executableTarget(
            name: "Places",
            dependencies: [
                "PlaceCatalog", "ServiceKit", "Postgres", "Messaging", "Contracts", .hummingbird, .argumentParser,
            ],
            path: "Services/Places", exclude: ["Catalog"], resources: [.copy("openapi.yaml")]),
        .target(
            name: "PlaceCatalog",
            dependencies: [
                "ServiceKit", "Postgres", "Messaging", "Contracts", .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Services/Places/Catalog", resources: [.copy("Migrations")]),

        // Matching: one executable that wires the flows, each a library over the core they share.
        .executableTarget(
            name: "Matching",
            dependencies: ["MatchingCore", "Delivery", "Tutoring", "Exchange", "Rides", "ServiceKit"],
            path: "Services/Matching", exclude: ["Core", "Delivery", "Tutoring", "Exchange", "Rides"]),
        .target(
            name: "MatchingCore",
            dependencies: [
                "ServiceKit", "Postgres", "Messaging", "Contracts", .hummingbird, .logging, .serviceLifecycle,
            ],
            path: "Services/Matching/Core", resources: [.copy("Migrations"), .copy("openapi.yaml")]),
        .target(
            name: "Delivery",
            dependencies: ["MatchingCore", "ServiceKit", "Postgres", "Messaging", "Contracts", .hummingbird, .logging],
            path: "Services/Matching/Delivery", resources: [.copy("Migrations"), .copy("openapi.yaml")]),
        .target(
            name: "Tutoring",
            dependencies: ["MatchingCore", "ServiceKit", "Postgres", "Messaging", "Contracts", .hummingbird],
            path: "Services/Matching/Tutoring", resources: [.copy("Migrations"), .copy("openapi.yaml")]),
        .target(
            name: "Exchange",
            dependencies: ["MatchingCore", "ServiceKit", "Postgres", "Messaging", "Contracts", .hummingbird],
            path: "Services/Matching/Exchange", resources: [.copy("Migrations"), .copy("openapi.yaml")]),
        .target(
            name: "Rides",
            dependencies: ["MatchingCore", "ServiceKit", "Postgres", "Messaging", "Contracts", .hummingbird, .logging],
            path: "Services/Matching/Rides", resources: [.copy("Migrations"), .copy("openapi.yaml")]),

        // Media: the executable serves images; keeping them (the tables, the image store, uploads) and reading,
        // checking and re-encoding them with libvips are libraries, which the benchmark shares.
        .executableTarget(
            name: "Media",
            dependencies: ["MediaStorage", "MediaImaging", "ServiceKit", "Messaging", "Contracts", .hummingbird],
            path: "Services/Media", exclude: ["Imaging", "Storage"], resources: [.copy("openapi.yaml")]),
        .target(
            name: "MediaStorage",
            dependencies: [
                "MediaImaging", "ServiceKit", "Postgres", "Messaging", "Contracts", .nioPosix,
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Services/Media/Storage", resources: [.copy("Migrations")]),
        .target(name: "MediaImaging", dependencies: ["CVips"], path: "Services/Media/Imaging"),

        .executableTarget(
            name: "Chat",
            dependencies: [
                "ServiceKit", "Postgres", "Messaging", "Contracts", .hummingbird, .serviceLifecycle,
                // TURN credentials: HMAC-SHA1 of coturn's shared-secret scheme.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Services/Chat", resources: [.copy("Migrations"), .copy("openapi.yaml")]),

        .executableTarget(
            name: "Notifications",
            dependencies: [
                "ServiceKit", "Postgres", "Messaging", "Contracts", .hummingbird, .serviceLifecycle, .nioConcurrency,
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Metrics", package: "swift-metrics"),
                // Push: Web Push's encryption and VAPID token, APNs' and FCM's tokens, and the requests to push
                // services (APNs over HTTP/2, trusting a CA of its own when configured).
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Services/Notifications", resources: [.copy("Migrations"), .copy("openapi.yaml")]),

        // MARK: The Swift client
        // Generated by scripts/generate-client from the services' OpenAPI descriptions, merged (Client/openapi), and
        // committed: no build runs the generator.
        .target(
            name: "TarrareAPI", dependencies: [.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
            path: "Client/TarrareAPI"),
        .target(
            name: "TarrareClient",
            dependencies: [
                "TarrareAPI", .logging,
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // The feed's WebSocket: NIO's, since Foundation's has none on Linux.
                .product(name: "WSClient", package: "swift-websocket"),
            ],
            path: "Client/TarrareClient"),

        // MARK: Tools
        .target(
            name: "BenchmarkSupport", dependencies: ["Postgres", "Messaging", .logging, .histogram],
            path: "Tools/BenchmarkSupport"),
        .executableTarget(
            name: "LoadGenerator",
            dependencies: [
                "BenchmarkSupport", "Contracts", "ServiceKit", "Postgres", "Messaging", "TarrareClient", .logging,
                .nioConcurrency, .argumentParser, .histogram,
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            path: "Tools/LoadGenerator", resources: [.copy("Migrations")]),
        .executableTarget(
            name: "PlacesBenchmark",
            dependencies: ["BenchmarkSupport", "PlaceCatalog", "ServiceKit", "Postgres", .logging, .argumentParser],
            path: "Tools/PlacesBenchmark"),
        .executableTarget(
            name: "TutoringBenchmark",
            dependencies: ["BenchmarkSupport", "Tutoring", "MatchingCore", .logging, .argumentParser],
            path: "Tools/TutoringBenchmark"),
        .executableTarget(
            name: "ExchangeBenchmark",
            dependencies: ["BenchmarkSupport", "Exchange", "MatchingCore", "Postgres", .logging, .argumentParser],
            path: "Tools/ExchangeBenchmark"),
        .executableTarget(
            name: "RidesBenchmark",
            dependencies: [
                "BenchmarkSupport", "Rides", "MatchingCore", "Postgres", .logging, .argumentParser, .histogram,
            ],
            path: "Tools/RidesBenchmark"),
        .executableTarget(
            name: "MediaBenchmark",
            dependencies: ["BenchmarkSupport", "MediaStorage", "MediaImaging", .logging, .argumentParser],
            path: "Tools/MediaBenchmark"),
        .executableTarget(
            name: "DeliverySimulation",
            dependencies: [
                "BenchmarkSupport", "Delivery", "MatchingCore", "ServiceKit", "Postgres", "Contracts", .logging,
                .argumentParser,
            ],
            path: "Tools/DeliverySimulation"),

        // MARK: Tests
        .target(
            name: "TestSupport",
            dependencies: [
                "Postgres", "Messaging", "ServiceKit", .logging, .hummingbird, .serviceLifecycle,
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            path: "Tests/TestSupport", exclude: ["campuses.json"]),
        .testTarget(
            name: "ClientTests",
            dependencies: [
                "TarrareClient", .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            path: "Tests/ClientTests"),
        .testTarget(
            name: "PostgresTests", dependencies: ["Postgres", "TestSupport"], path: "Tests/PostgresTests",
            exclude: ["Migrations"]),
        .testTarget(
            name: "MessagingTests",
            dependencies: [
                "Messaging", "Postgres", "Contracts", "TestSupport", .serviceLifecycle, .logging, .nioConcurrency,
            ],
            path: "Tests/MessagingTests", exclude: ["Migrations"]),
        .testTarget(
            name: "AccountsTests",
            dependencies: [
                "Accounts", "TestSupport", "ServiceKit", "Messaging", "Postgres", "Contracts", .nioConcurrency,
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            path: "Tests/AccountsTests"),
        .testTarget(
            name: "PlacesTests",
            dependencies: [
                "Places", "PlaceCatalog", "TestSupport", "ServiceKit", "Messaging", "Postgres",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            path: "Tests/PlacesTests", exclude: ["Fixtures"]),
        .testTarget(
            name: "ServiceKitTests", dependencies: ["ServiceKit"], path: "Tests/ServiceKitTests"),
        .testTarget(
            name: "LoadGeneratorTests",
            dependencies: ["LoadGenerator", .product(name: "NIOCore", package: "swift-nio")],
            path: "Tests/LoadGeneratorTests"),
        // Matching: each flow's tests run matching with that flow alone; MatchingTests, the executable with all of them.
        .target(
            name: "MatchingTestSupport",
            dependencies: [
                "MatchingCore", "TestSupport", "ServiceKit", "Postgres", "Messaging", "Contracts", .logging,
                .hummingbird, .serviceLifecycle, .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Tests/MatchingTestSupport"),
        .testTarget(
            name: "MatchingTests",
            dependencies: [
                "Matching", "MatchingCore", "Delivery", "Rides", "TestSupport", "ServiceKit", "Postgres", .logging,
            ],
            path: "Tests/MatchingTests"),
        .testTarget(
            name: "DeliveryTests",
            dependencies: [
                "Delivery", "MatchingCore", "MatchingTestSupport", "TestSupport", "ServiceKit", "Postgres", "Contracts",
                "Messaging", .logging, .serviceLifecycle,
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Tests/DeliveryTests"),
        .testTarget(
            name: "TutoringTests",
            dependencies: [
                "Tutoring", "MatchingCore", "MatchingTestSupport", "TestSupport", "ServiceKit", "Contracts",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Tests/TutoringTests"),
        .testTarget(
            name: "ExchangeTests",
            dependencies: [
                "Exchange", "MatchingCore", "MatchingTestSupport", "TestSupport", "ServiceKit", "Postgres", "Contracts",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Tests/ExchangeTests"),
        .testTarget(
            name: "RidesTests",
            dependencies: [
                "Rides", "MatchingCore", "MatchingTestSupport", "TestSupport", "ServiceKit", "Postgres", "Contracts",
                .logging,
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Tests/RidesTests"),
        .testTarget(
            name: "MediaTests",
            dependencies: [
                "Media", "MediaStorage", "MediaImaging", "TestSupport", "ServiceKit",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            path: "Tests/MediaTests", exclude: ["Fixtures"]),
        .testTarget(
            name: "ChatTests",
            dependencies: [
                "Chat", "TestSupport", "ServiceKit", "Messaging", "Postgres", "Contracts", .serviceLifecycle,
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            path: "Tests/ChatTests"),
        .testTarget(
            name: "NotificationsTests",
            dependencies: [
                // Duets: a flow of the tests alone, whose events it publishes as matching would.
                "Notifications", "Duets", "TestSupport", "ServiceKit", "Messaging", "Postgres", "Contracts",
                .serviceLifecycle,
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "JWTKit", package: "jwt-kit"), .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/NotificationsTests"),
        // A flow that exists only in the tests: a folder and one line of wiring (FourthFlowTests).
        .target(
            name: "Duets",
            dependencies: ["MatchingCore", "ServiceKit", "Postgres", "Messaging", "Contracts", .hummingbird],
            path: "Tests/Duets", resources: [.copy("Migrations"), .copy("openapi.yaml")]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                // The executables the processes run are built with the tests.
                "Accounts", "Places", "Matching", "Chat", "Notifications",
                // Delivery: its events, published as matching would; Duets: a flow of the tests alone.
                "Delivery", "Duets", "MatchingCore", "TestSupport", "ServiceKit", "Contracts", "Messaging", "Postgres",
                .hummingbird, .serviceLifecycle, .nioConcurrency,
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            path: "Tests/IntegrationTests"),
    ]
)

extension Target.Dependency {
    static let argumentParser = Target.Dependency.product(name: "ArgumentParser", package: "swift-argument-parser")
    static let histogram = Target.Dependency.product(name: "Histogram", package: "hdrhistogram-swift")
    static let hummingbird = Target.Dependency.product(name: "Hummingbird", package: "hummingbird")
    static let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
    static let nioConcurrency = Target.Dependency.product(name: "NIOConcurrencyHelpers", package: "swift-nio")
    static let nioPosix = Target.Dependency.product(name: "NIOPosix", package: "swift-nio")
    static let serviceLifecycle = Target.Dependency.product(
        name: "ServiceLifecycle", package: "swift-service-lifecycle")
}
