// swift-tools-version:6.0
// The performance harness (issue 6): one executable, `tresor-bench`, run by `scripts/bench`.
// A separate package so the main one stays free of benchmark code: it depends on Tresor by
// path and on the library products Tresor exposes (like Fuzz/).
import PackageDescription

let package = Package(
    name: "TresorBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Tresor", path: ".."),
    ],
    targets: [
        .executableTarget(name: "tresor-bench", dependencies: [
            .product(name: "TresorKit", package: "Tresor"),
            .product(name: "TresorCrypto", package: "Tresor"),
            .product(name: "TresorKeybag", package: "Tresor"),
            .product(name: "TresorKeychain", package: "Tresor"),
            .product(name: "TresorNotes", package: "Tresor"),
            .product(name: "TresorProtocol", package: "Tresor"),
        ], path: "Sources/tresor-bench", swiftSettings: [.swiftLanguageMode(.v5)]),
    ]
)
