// swift-tools-version:6.0
// libFuzzer targets for every parser of outside input (docs/SECURITY.md, "Crash, load, fuzzing and memory tests"). Built and run by
// `scripts/fuzz`, which passes the sanitizer and coverage flags; see Fuzz/README.md.
//
// A separate package so the main one stays free of fuzzing flags: it depends on Tresor by
// path and on the library products Tresor exposes for it.
import PackageDescription

// Every fuzz target is an executable whose main.swift hands its closure to libFuzzer's driver.
func fuzzTarget(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(name: name, dependencies: ["FuzzSupport"] + dependencies, path: "Targets/\(name)")
}

let package = Package(
    name: "TresorFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        // `name:` so the products resolve whatever the clone's folder is called.
        .package(name: "Tresor", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
    ],
    targets: [
        // Declares libFuzzer's LLVMFuzzerRunDriver (the runtime itself is linked by scripts/fuzz).
        .target(name: "CFuzzDriver", path: "Sources/CFuzzDriver"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzDriver"], path: "Sources/FuzzSupport"),

        fuzzTarget(
            "envelope",
            [
                .product(name: "TresorCrypto", package: "Tresor"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        fuzzTarget(
            "keybag",
            [
                .product(name: "TresorKeybag", package: "Tresor"),
                .product(name: "TresorCrypto", package: "Tresor"),
                .product(name: "TresorKit", package: "Tresor"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        fuzzTarget(
            "request-decoding",
            [
                .product(name: "TresorProtocol", package: "Tresor"),
                .product(name: "TresorKeychain", package: "Tresor"),
            ]),
        fuzzTarget(
            "certificate",
            [
                .product(name: "TresorKeychain", package: "Tresor")
            ]),
        fuzzTarget(
            "http-response",
            [
                .product(name: "TresorKit", package: "Tresor"),
                .product(name: "TresorProtocol", package: "Tresor"),
            ]),
        fuzzTarget(
            "apple-notes-body",
            [
                .product(name: "TresorAppleNotes", package: "Tresor")
            ]),
        fuzzTarget(
            "apple-notestore",
            [
                .product(name: "TresorAppleNotes", package: "Tresor")
            ]),
        fuzzTarget(
            "dbus-message",
            [
                .product(name: "TresorDBus", package: "Tresor")
            ]),
        fuzzTarget(
            "age-file",
            [
                .product(name: "TresorAge", package: "Tresor"),
                .product(name: "TresorCrypto", package: "Tresor"),
            ]),
        fuzzTarget(
            "secitem-dictionary",
            [
                .product(name: "TresorSecurity", package: "Tresor")
            ]),
        fuzzTarget(
            "item-attributes",
            [
                .product(name: "TresorModel", package: "Tresor"),
                .product(name: "TresorProtocol", package: "Tresor"),
            ]),
        fuzzTarget(
            "backup-records",
            [
                .product(name: "TresorAge", package: "Tresor"),
                .product(name: "TresorCrypto", package: "Tresor"),
                .product(name: "TresorBackup", package: "Tresor"),
                .product(name: "TresorKeychain", package: "Tresor"),
                .product(name: "TresorNotes", package: "Tresor"),
            ]),
    ]
)
