// swift-tools-version:6.0
// The performance harness (BENCHMARKS.md): one executable, `tresor-bench`, run by `scripts/bench`.
// A separate package so the main one stays free of benchmark code: it depends on Tresor by
// path and on the library products Tresor exposes (like Fuzz/).
import PackageDescription

let package = Package(
    name: "TresorBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Tresor", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        // PostgresWebStorage.open takes a Logger (the web scenarios' seeding: WebBench.swift).
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
    ],
    targets: [
        .executableTarget(name: "tresor-bench", dependencies: [
            .product(name: "TresorKit", package: "Tresor"),
            .product(name: "TresorCrypto", package: "Tresor"),
            .product(name: "TresorDBus", package: "Tresor"),
            .product(name: "TresorKeybag", package: "Tresor"),
            .product(name: "TresorKeychain", package: "Tresor"),
            .product(name: "TresorModel", package: "Tresor"),
            .product(name: "TresorNotes", package: "Tresor"),
            .product(name: "TresorNotesDomain", package: "Tresor"),
            .product(name: "TresorProtocol", package: "Tresor"),
            .product(name: "TresorSecurity", package: "Tresor"),
            .product(name: "TresorSystem", package: "Tresor"),
            .product(name: "TresorWebStore", package: "Tresor"),
            .product(name: "TresorWebStorePostgres", package: "Tresor"),
            .product(name: "TresorWebStoreSQLite", package: "Tresor"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Crypto", package: "swift-crypto"),
        ], path: "Sources/tresor-bench", swiftSettings: [.swiftLanguageMode(.v5)]),
        // The smallest HTTP servers on a Unix socket: the transport's floor beside tresord's.
        .executableTarget(name: "transport-floor", dependencies: [
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "TresorKeybag", package: "Tresor"),
            .product(name: "TresorKeychain", package: "Tresor"),
            .product(name: "TresorKit", package: "Tresor"),
            .product(name: "Logging", package: "swift-log"),
        ], path: "Sources/transport-floor"),
    ]
)
