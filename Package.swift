// swift-tools-version:6.0
// Tresor — Apple's data-protection design on Linux. See README.md and docs/ARCHITECTURE.md.
import PackageDescription

let package = Package(
    name: "Tresor",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "TresorKit", targets: ["TresorKit"]),
        // Apple's SecItem API on Linux, over TresorKit: Apple-platform keychain code compiles
        // with one conditional import.
        .library(name: "TresorSecurity", targets: ["TresorSecurity"]),
        // For the fuzz package (Fuzz/), which drives these modules' parsers directly.
        .library(name: "TresorCrypto", targets: ["TresorCrypto"]),
        .library(name: "TresorKeybag", targets: ["TresorKeybag"]),
        .library(name: "TresorKeychain", targets: ["TresorKeychain"]),
        .library(name: "TresorProtocol", targets: ["TresorProtocol"]),
        .library(name: "TresorNotes", targets: ["TresorNotes"]),
        .library(name: "TresorAppleNotes", targets: ["TresorAppleNotes"]),
        .library(name: "TresorModel", targets: ["TresorModel"]),
        .library(name: "TresorSystem", targets: ["TresorSystem"]),
        .library(name: "TresorDBus", targets: ["TresorDBus"]),
        .library(name: "TresorDesktopPrompt", targets: ["TresorDesktopPrompt"]),
        .library(name: "TresorAge", targets: ["TresorAge"]),
        .library(name: "TresorBackup", targets: ["TresorBackup"]),
        .library(name: "TresorNotesDomain", targets: ["TresorNotesDomain"]),
        .library(name: "TresorWebStore", targets: ["TresorWebStore"]),
        .library(name: "TresorWebStorePostgres", targets: ["TresorWebStorePostgres"]),
        .library(name: "TresorWebStoreSQLite", targets: ["TresorWebStoreSQLite"]),
        .library(name: "TresorSync", targets: ["TresorSync"]),
        .library(name: "TresorSyncProtocol", targets: ["TresorSyncProtocol"]),
        .library(name: "TresorSyncServer", targets: ["TresorSyncServer"]),
        .library(name: "TresorSyncClient", targets: ["TresorSyncClient"]),
        .library(name: "TresorSyncEngine", targets: ["TresorSyncEngine"]),
        .executable(name: "tresord", targets: ["tresord"]),
        .executable(name: "tresor", targets: ["tresor"]),
        .executable(name: "tresor-read-apple-notes", targets: ["tresor-read-apple-notes"]),
        .executable(name: "tresor-read-secret-service", targets: ["tresor-read-secret-service"]),
        .executable(name: "tresor-server-migrate", targets: ["tresor-server-migrate"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", exact: "1.21.1"),
        // The sync client's HTTP and TLS (TresorSyncClient only).
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-protobuf.git", exact: "1.39.0"),
        // PostgreSQL for the Tresor server's web storage (TresorWebStorePostgres only).
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", exact: "1.5.0"),
        // `swift package generate-documentation`: the DocC catalogues of TresorKit and TresorSecurity.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", exact: "1.5.0"),
        // Property-based tests with Swift Testing (the notes' merge rules), tests only.
        .package(url: "https://github.com/x-sheep/swift-property-based.git", exact: "2.0.1"),
    ],
    targets: [
        // Linux plumbing Swift's Glibc does not expose (ucred, variadic prctl).
        .target(name: "CTresorSystem"),
        // libdbus-1 from Debian (libdbus-1-dev), the reference D-Bus library.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        // D-Bus through libdbus: values, messages, a connection driven by one thread. Knows
        // nothing of Tresor.
        .target(name: "TresorDBus", dependencies: ["CDBus"]),
        // Paths, file modes, atomic files, peer credentials, process hardening, environment checks.
        .target(name: "TresorSystem", dependencies: ["CTresorSystem"]),
        // The values every part speaks of: items, queries, protection classes, applications,
        // notes as listed. Foundation only, so applications and the CLI link no storage.
        .target(name: "TresorModel"),
        // The Secret Service's Diffie-Hellman exponentiation, by the BoringSSL swift-crypto
        // vendors (swift-crypto has no finite-field DH API; modexp.c says how it is reached).
        .target(name: "CTresorCrypto", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        // Typed wrappers over swift-crypto. No I/O.
        .target(name: "TresorCrypto", dependencies: [
            "CTresorCrypto",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "CryptoExtras", package: "swift-crypto"),
        ]),
        // The age v1 file format with a passphrase (scrypt) recipient, streamed: what a backup
        // file is, so that the standard `age -d` opens it (docs/FORMAT.md).
        .target(name: "TresorAge", dependencies: ["TresorCrypto", "TresorSystem", .product(name: "Crypto", package: "swift-crypto")]),
        // How every Tresor database is kept: GRDB, WAL, secure_delete, truncating checkpoints.
        .target(name: "TresorStorage", dependencies: ["TresorModel", "TresorSystem", .product(name: "GRDB", package: "GRDB.swift")]),
        // Device key, passcode, class keys, lock state, failed-attempt policy.
        .target(name: "TresorKeybag", dependencies: ["TresorModel", "TresorCrypto", "TresorSystem", .product(name: "Crypto", package: "swift-crypto")]),
        // Items, queries, two-key encryption, blind index, access groups, applications (GRDB).
        .target(name: "TresorKeychain", dependencies: [
            "TresorModel", "TresorKeybag", "TresorCrypto", "TresorSystem", "TresorStorage",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "X509", package: "swift-certificates"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "SwiftASN1", package: "swift-asn1"),
        ]),
        // Apple Notes' formats: NoteStore.sqlite rows, gzipped protobuf note bodies. Parses
        // hostile input, so it is bounded everywhere and fuzzed (Fuzz/).
        .target(name: "TresorAppleNotes", dependencies: [
            "TresorModel",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            .product(name: "CompressNIO", package: "compress-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
        ], exclude: ["Proto/notestore.proto"]),
        // The notes domain (docs/ARCHITECTURE.md): the values, errors and rules every note store
        // applies alike (names, merges, locked-note shapes, search words, account passwords) and the
        // store protocols both stores answer. No database type.
        .target(name: "TresorNotesDomain", dependencies: ["TresorModel", "TresorCrypto"]),
        // The web server's own state beside the notes store: browser sessions, invites, throttle
        // counters and the login throttle over them, the event bus, and the backend that bundles
        // them with a notes store. Kept in memory (embedded) or in PostgreSQL (server mode).
        .target(name: "TresorWebStore", dependencies: ["TresorModel", "TresorNotesDomain", "TresorCrypto"]),
        // Accounts, folders, notes, attachments, locked notes, secure sessions, passphrases (GRDB).
        .target(name: "TresorNotes", dependencies: [
            "TresorModel", "TresorNotesDomain", "TresorKeybag", "TresorCrypto", "TresorSystem", "TresorStorage", "TresorAppleNotes",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // Backups: the record stream inside an age file, written from a home's stores and
        // restored into one through a staging area and its journals (docs/FORMAT.md, "Backups").
        .target(name: "TresorBackup", dependencies: [
            "TresorAge", "TresorCrypto", "TresorKeybag", "TresorKeychain", "TresorModel", "TresorNotes", "TresorNotesDomain",
            "TresorProtocol", "TresorStorage", "TresorSystem", .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        // The embedded web backend: a home's notes database (TresorNotes, SQLite) behind the web
        // storage boundary, sessions, counters and invites in the daemon's memory.
        .target(name: "TresorWebStoreSQLite", dependencies: ["TresorWebStore", "TresorNotes", "TresorNotesDomain", "TresorCrypto", "TresorSystem"]),
        // The web storage on PostgreSQL (server mode); with TresorSyncServer, the only modules importing PostgresNIO.
        .target(name: "TresorWebStorePostgres", dependencies: [
            "TresorModel", "TresorNotesDomain", "TresorWebStore", "TresorCrypto", "TresorSystem",
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // Sync's end-to-end cryptography on the device, no networking (docs/SYNC.md): device
        // identities kept in the keybag, the circle's epoch keys shared by HPKE, the signed
        // trusted-device list, sealed and signed records, and the checks made on what a server serves.
        .target(name: "TresorSync", dependencies: ["TresorSyncProtocol", "TresorModel", "TresorKeybag", "TresorCrypto", "TresorSystem", .product(name: "Crypto", package: "swift-crypto")]),
        // Sync's wire types (docs/SYNC.md, "Transport"): what a device and a server's sync relay
        // exchange (Codable values) and the rule a device id follows; devices link no server.
        .target(name: "TresorSyncProtocol", dependencies: ["TresorModel", "TresorNotesDomain", .product(name: "Crypto", package: "swift-crypto")]),
        // A server's sync relay (docs/SYNC.md, "Transport"): devices, join requests, the signed
        // device list and the sealed keychain records of each account, in the server's
        // PostgreSQL, ordered by a counter handed out in commit order; routes under /v1/sync.
        .target(name: "TresorSyncServer", dependencies: [
            "TresorModel", "TresorSyncProtocol", "TresorNotesDomain", "TresorWebStore", "TresorWebStorePostgres", "TresorCrypto",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // A device's HTTP client of a server's sync relay (docs/SYNC.md, "Transport"): every
        // /v1/sync route as a typed call, sign-in with the device's credential, the records
        // transport of the device's sync engine, the live events stream. AsyncHTTPClient on
        // SwiftNIO, TLS through swift-nio-ssl (BoringSSL), a CA of the user's own when given.
        .target(name: "TresorSyncClient", dependencies: [
            "TresorSyncProtocol", .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
        // A device's sync engine (docs/SYNC.md, "What syncs", "Conflicts and deletions"): pushes the
        // keychain's outbox, pulls and verifies pages, applies them by the conflict rules; no networking.
        .target(name: "TresorSyncEngine", dependencies: ["TresorSync", "TresorSyncProtocol", "TresorKeychain", "TresorModel"]),
        // The versioned wire types of the daemon's local API, shared by the daemon and its clients.
        .target(name: "TresorProtocol", dependencies: ["TresorModel", "TresorSystem"]),
        // The web client (docs/WEB.md): plain HTML, CSS and JavaScript modules in Web/static,
        // served by the daemon's web server. No build step.
        .target(name: "TresorWebClient", path: "Web", exclude: [], sources: ["WebClient.swift"], resources: [.copy("static")]),
        // The freedesktop Secret Service (org.freedesktop.secrets) answered from the keychain,
        // each executable seeing only its own items (docs/SECRET-SERVICE.md).
        .target(name: "TresorSecretService", dependencies: [
            "TresorDBus", "TresorKeychain", "TresorKeybag", "TresorModel", "TresorCrypto", "TresorSystem", "CTresorSystem",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The desktop's own prompter (gcr's org.gnome.keyring.SystemPrompter) asked over the
        // session bus: confirmations and passwords, the password through gcr's secret exchange.
        .target(name: "TresorDesktopPrompt", dependencies: [
            "TresorDBus", "TresorCrypto", "TresorSystem", .product(name: "Crypto", package: "swift-crypto"),
        ]),
        // The web server (docs/WEB.md): a Hummingbird application serving the web client and its
        // JSON API over the web storage boundary, embedded in the daemon or as a server on
        // PostgreSQL. It sees the home's keybag only through ``LocalKeybag``, which the daemon provides.
        .target(name: "TresorWebServer", dependencies: [
            "TresorCrypto", "TresorModel", "TresorProtocol", "TresorSystem", "TresorWebClient", "TresorNotesDomain", "TresorWebStore",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOFoundationCompat", package: "swift-nio"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The daemon (tresord's): socket API, peer identity, auto-lock, Secret Service; starts the web server.
        .target(name: "TresorDaemon", dependencies: [
            "CTresorSystem", "TresorBackup", "TresorCrypto", "TresorDBus", "TresorDesktopPrompt", "TresorKeybag", "TresorKeychain", "TresorModel",
            "TresorNotes",
            "TresorNotesDomain", "TresorProtocol", "TresorSecretService", "TresorStorage", "TresorSystem", "TresorWebServer", "TresorWebStore", "TresorWebStorePostgres",
            "TresorWebStoreSQLite", "TresorSyncServer", "TresorSync", "TresorSyncClient", "TresorSyncEngine", "TresorSyncProtocol",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOFoundationCompat", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The client library used by applications and by the CLI: the wire types and the model,
        // no storage, no crypto — an application that links it starts as fast as a small tool.
        .target(name: "TresorKit", dependencies: ["TresorModel", "TresorProtocol", "TresorSystem"]),
        // The Security framework's keychain surface (SecItem…, kSec…, errSec…, CF spellings).
        // Full Foundation, unlike TresorKit: the code it serves already imports it.
        .target(name: "TresorSecurity", dependencies: ["TresorKit", "TresorModel"]),
        .executableTarget(name: "tresord", dependencies: [
            "TresorDaemon", "TresorKit", "TresorProtocol", "TresorSystem",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(name: "tresor", dependencies: [
            "TresorKit", "TresorModel", "TresorProtocol", "TresorSystem",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // Reads an Apple Notes database for `tresor import apple-notes`, in a process of its own
        // that has no connection to the daemon: the hostile file is parsed there, and `tresor`
        // (which links no SQLite, protobuf or gzip) receives the notes as JSON.
        .executableTarget(name: "tresor-read-apple-notes", dependencies: ["TresorAppleNotes", "TresorProtocol"]),
        // Reads another Secret Service provider's items (gnome-keyring, KeePassXC) over D-Bus for
        // `tresor import secret-service`, in a process of its own: `tresor` links no libdbus, and
        // receives the items as JSON.
        .executableTarget(name: "tresor-read-secret-service", dependencies: ["TresorDBus", "TresorModel", "TresorProtocol", "TresorSystem"]),
        // Moves a home's web accounts onto a server's PostgreSQL for `tresor server migrate`, in
        // a process `tresor` executes in its place: it reads the home's notes database (SQLite)
        // and writes the server's, and `tresor` links neither (docs/ARCHITECTURE.md).
        .executableTarget(name: "tresor-server-migrate", dependencies: [
            "TresorKeybag", "TresorNotes", "TresorNotesDomain", "TresorSystem", "TresorWebStore", "TresorWebStorePostgres",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Example: stores and reads an API token (README, "From Swift").
        .executableTarget(name: "store-token", dependencies: ["TresorKit"], path: "Examples/StoreToken"),
        // Example: keeps a website's password with Apple's SecItem calls (docs/SECITEM.md).
        .executableTarget(name: "website-password", dependencies: ["TresorSecurity"], path: "Examples/WebsitePassword"),
        // The performance harness (BENCHMARKS.md), run by scripts/bench: its sources live in
        // Benchmarks/ beside its scripts and recorded runs. Built with everything else, so CI's
        // smoke run of it needs no build of its own.
        .executableTarget(name: "tresor-bench", dependencies: [
            "TresorCrypto", "TresorDBus", "TresorKeybag", "TresorKeychain", "TresorKit", "TresorModel", "TresorNotes",
            "TresorNotesDomain", "TresorProtocol", "TresorSecurity", "TresorSystem", "TresorWebStore",
            "TresorWebStorePostgres", "TresorWebStoreSQLite",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Crypto", package: "swift-crypto"),
        ], path: "Benchmarks/Sources/tresor-bench", swiftSettings: [.swiftLanguageMode(.v5)]),
        // The smallest HTTP servers on a Unix socket: the transport's floor beside tresord's.
        .executableTarget(name: "transport-floor", dependencies: [
            "TresorKeybag", "TresorKeychain", "TresorKit",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], path: "Benchmarks/Sources/transport-floor"),
        // Two small keychain clients the end-to-end tests register as different applications.
        .target(name: "KeychainProbe", dependencies: ["TresorKit"], path: "Tests/Fixtures/KeychainProbe"),
        .executableTarget(name: "ProbeAlpha", dependencies: ["KeychainProbe"], path: "Tests/Fixtures/ProbeAlpha"),
        .executableTarget(name: "ProbeBeta", dependencies: ["KeychainProbe"], path: "Tests/Fixtures/ProbeBeta"),
        // What the tests share (Tests/TestSupport): a program on a pseudo-terminal, a private
        // session bus, a desktop (Xvfb, gcr-prompter), a throwaway PostgreSQL and tresord, the user
        // the tests run Tresor as, helper processes with bounded waits.
        .target(name: "TresorTestSupport", dependencies: [
            "TresorDBus", "TresorKeybag", "TresorKit", "TresorSystem",
            .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
        ], path: "Tests/TestSupport"),
        // Writes NoteStore.sqlite files shaped like Apple's, and the known locked-note vectors.
        .target(name: "NoteStoreFixture", dependencies: [
            "TresorAppleNotes", "TresorCrypto", .product(name: "GRDB", package: "GRDB.swift"),
        ], path: "Tests/Fixtures/NoteStoreFixture"),

        .testTarget(name: "TresorCryptoTests", dependencies: ["TresorCrypto", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(name: "TresorBackupTests", dependencies: [
            "TresorBackup", "TresorAge", "TresorCrypto", "TresorKeychain", "TresorModel", "TresorNotes", "TresorProtocol",
        ]),
        .testTarget(name: "TresorAgeTests", dependencies: ["TresorAge", "TresorCrypto", "TresorTestSupport"]),
        .testTarget(name: "TresorKeybagTests", dependencies: [
            "TresorKeybag", "TresorCrypto", "TresorSystem", "TresorTestSupport", .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .testTarget(name: "TresorSyncTests", dependencies: [
            "TresorSync", "TresorSyncProtocol", "TresorKeybag", "TresorCrypto", "TresorSystem", "TresorTestSupport",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .testTarget(name: "TresorKeychainTests", dependencies: [
            "TresorKeychain", "TresorKeybag", "TresorStorage", "TresorCrypto", "TresorSystem", "TresorTestSupport",
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        .testTarget(name: "TresorSystemTests", dependencies: ["TresorSystem", "TresorTestSupport"]),
        .testTarget(name: "TresorModelTests", dependencies: ["TresorModel"]),
        .testTarget(name: "TresorDBusTests", dependencies: ["TresorDBus", "TresorSystem", "TresorTestSupport"]),
        .testTarget(name: "TresorSecretServiceTests", dependencies: [
            "TresorSecretService", "TresorKeychain", "TresorKeybag", "TresorDBus", "TresorCrypto", "TresorSystem", "TresorTestSupport",
        ]),
        .testTarget(name: "TresorProtocolTests", dependencies: ["TresorProtocol", "TresorModel"]),
        // Against the real gcr-prompter under Xvfb, on a private session bus.
        .testTarget(name: "TresorDesktopPromptTests", dependencies: ["TresorDesktopPrompt", "TresorCrypto", "TresorDBus", "TresorTestSupport"]),
        .testTarget(name: "TresorNotesTests", dependencies: [
            "TresorNotes", "TresorNotesDomain", "TresorKeybag", "TresorCrypto", "TresorSystem", "TresorAppleNotes", "TresorTestSupport",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "PropertyBased", package: "swift-property-based"),
        ]),
        .testTarget(name: "TresorAppleNotesTests", dependencies: [
            "TresorAppleNotes", "TresorCrypto", "NoteStoreFixture", .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        .testTarget(name: "TresorDaemonTests", dependencies: [
            "TresorDaemon", "TresorCrypto", "TresorKeybag", "TresorKeychain", "TresorProtocol", "TresorSecretService", "TresorSyncProtocol",
            "TresorSystem", "TresorTestSupport", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"), .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "TresorWebServerTests", dependencies: [
            "TresorWebServer", "TresorNotesDomain", "TresorWebStore", "TresorProtocol", .product(name: "NIOCore", package: "swift-nio"), .product(name: "Hummingbird", package: "hummingbird"),
        ]),
        // The web storage boundary's conformance suite, on the embedded backend and on a
        // throwaway PostgreSQL server; the server database's migrations and failures.
        .testTarget(name: "TresorWebStoreTests", dependencies: [
            "TresorNotesDomain", "TresorWebStore", "TresorWebStoreSQLite", "TresorWebStorePostgres", "TresorNotes", "TresorKeybag", "TresorSystem", "TresorTestSupport",
            .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
        ]),
        // The sync relay on a throwaway PostgreSQL: its routes in process, two relays on one database.
        .testTarget(name: "TresorSyncServerTests", dependencies: [
            "TresorSyncServer", "TresorSyncProtocol", "TresorNotesDomain", "TresorWebStore", "TresorWebStorePostgres", "TresorTestSupport",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Hummingbird", package: "hummingbird"), .product(name: "HummingbirdTesting", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The device's sync client against a real relay on a real port, on a throwaway PostgreSQL.
        .testTarget(name: "TresorSyncClientTests", dependencies: [
            "TresorSyncClient", "TresorSyncServer", "TresorSyncProtocol", "TresorNotesDomain", "TresorWebStore", "TresorWebStorePostgres",
            "TresorTestSupport",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdTesting", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
        ]),
        // The sync engine: keychain stores in temporary homes as devices, a real relay on a throwaway PostgreSQL.
        .testTarget(name: "TresorSyncEngineTests", dependencies: [
            "TresorSyncEngine", "TresorSync", "TresorSyncProtocol", "TresorSyncServer", "TresorKeychain", "TresorKeybag", "TresorSystem",
            "TresorCrypto", "TresorWebStore", "TresorWebStorePostgres", "TresorNotesDomain", "TresorTestSupport",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "PropertyBased", package: "swift-property-based"),
        ]),
        // The CLI's own reading of command lines (the processes themselves: EndToEndTests).
        .testTarget(name: "TresorCLITests", dependencies: ["tresor", "TresorModel", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        // SecItem code as wrappers and Apple's samples write it, one test per idiom, against a real tresord.
        .testTarget(name: "TresorSecurityTests", dependencies: ["TresorSecurity", "TresorKit", "TresorModel", "TresorTestSupport"]),
        // TresorKit against a real tresord, a daemon that never answers and one that answers garbage; its documented surface.
        .testTarget(name: "TresorKitTests", dependencies: ["TresorKit", "TresorSystem", "TresorTestSupport"]),
        // How every database is kept: the restore's statement journal.
        .testTarget(name: "TresorStorageTests", dependencies: ["TresorStorage", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "EndToEndTests", dependencies: [
            "TresorKit", "TresorKeybag", "TresorCrypto", "TresorModel", "TresorProtocol", "TresorSystem", "TresorNotes", "NoteStoreFixture", "TresorTestSupport",
            "TresorSecurity",
            "TresorBackup", "TresorSync", "TresorSyncProtocol", .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
    ]
)
