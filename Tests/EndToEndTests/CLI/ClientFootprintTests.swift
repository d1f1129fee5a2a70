import Foundation
import Testing
import TresorTestSupport

/// The `tresor` CLI is a client: it links the model, the wire types and the socket client,
/// not the storage, crypto or parsers of the daemon's side (every process start pays for what
/// a binary links — BENCHMARKS.md §3). The Apple Notes parser lives in
/// `tresor-read-apple-notes`, a process of its own, and libdbus in `tresor-read-secret-service`.
@Suite(.blocksItsThread) struct ClientFootprintTests {
    /// Mangled-name prefixes of the modules a client must not link, and the library SQLite is.
    static let serverSide = [
        "4GRDB", "13SwiftProtobuf", "4X509", "7NIOCore", "6Crypto", "16TresorAppleNotes", "14TresorKeychain", "11TresorNotes", "10TresorDBus",
    ]

    func contains(_ binary: Data, _ text: String) -> Bool {
        binary.range(of: Data(text.utf8)) != nil
    }

    @Test func theCLILinksNoStorageCryptoOrParsers() throws {
        let cli = try Data(contentsOf: Harness.binaries.appendingPathComponent("tresor"), options: .alwaysMapped)
        for module in Self.serverSide { #expect(!contains(cli, "$s" + module), "tresor links \(module)") }
        #expect(!contains(cli, "libsqlite3.so"))
        // The same search finds them where they are: the reader links the parser and SQLite.
        let reader = try Data(contentsOf: Harness.binaries.appendingPathComponent("tresor-read-apple-notes"), options: .alwaysMapped)
        #expect(contains(reader, "$s4GRDB") && contains(reader, "$s16TresorAppleNotes") && contains(reader, "libsqlite3.so"))
        #expect(!contains(cli, "libdbus-1.so"))
        let busReader = try Data(contentsOf: Harness.binaries.appendingPathComponent("tresor-read-secret-service"), options: .alwaysMapped)
        #expect(contains(busReader, "$s10TresorDBus") && contains(busReader, "libdbus-1.so"))
    }

    /// Nor the part of Foundation beyond FoundationEssentials (`FileHandle`, `Process`,
    /// `Thread`, ICU): loading it cost every `tresor` process ~0.7 ms (BENCHMARKS.md §3). The
    /// modules the CLI links import `FoundationEssentials` only.
    @Test func theCLILinksFoundationEssentialsOnly() throws {
        let cli = try Data(contentsOf: Harness.binaries.appendingPathComponent("tresor"), options: .alwaysMapped)
        #expect(!contains(cli, "$s10Foundation"), "tresor links Foundation")
        #expect(!contains(cli, "libFoundation.so\0") && !contains(cli, "libFoundationInternationalization.so"))
        // The same search finds it where it is: the daemon uses the whole of Foundation.
        let daemon = try Data(contentsOf: Harness.binaries.appendingPathComponent("tresord"), options: .alwaysMapped)
        #expect(contains(daemon, "$s10Foundation"))
    }
}
