import Foundation
import Testing
import TresorTestSupport

/// Signals that name items go only to the programs that see those items: another program on
/// the bus, listening to everything the provider sends, never learns that an item exists.
@Suite(
    .blocksItsThread, .serialized,
    .enabled(
        if: SecretService.toolsInstalled,
        "needs dbus-daemon, secret-tool, gnome-keyring, gcc and Debian's Python clients (scripts/test installs them)"))
struct SecretServiceSignalTests {
    /// Reads the monitor's lines until one contains `wanted`; returns the lines before it.
    private func lines(of monitor: BackgroundProcess, until wanted: String) throws -> [String] {
        var seen: [String] = []
        while let line = try explained(wanted, seen, { try monitor.nextLine(timeout: 60) }) {
            if line.contains(wanted) { return seen }
            seen.append(line)
        }
        Issue.record("the monitor never printed \(wanted); it printed \(seen)")
        return seen
    }

    private func explained<T>(_ wanted: String, _ seen: [String], _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw SecretServiceTestError.fixture("waiting for \(wanted) after \(seen): \(error)")
        }
    }

    @Test func itemSignalsReachNoOtherProgram() throws {
        let provider = try TresorProvider()
        // Another program subscribes to every signal the provider's connection sends (no
        // eavesdropping: what any program of the user may ask the bus for).
        let monitor = try BackgroundProcess(
            harness: provider.harness, executable: PythonClients.python,
            arguments: ["-B", PythonClients.fixtures.appendingPathComponent("listen.py").path])
        _ = try lines(of: monitor, until: "listening")
        // A lock and an unlock are broadcast (PropertiesChanged of the collection's Locked): once
        // the monitor has seen the first, it is listening.
        try provider.lock()
        _ = try lines(of: monitor, until: "PropertiesChanged")
        try provider.unlock()
        _ = try lines(of: monitor, until: "PropertiesChanged")

        let secret = provider.marker("signal")
        #expect(try provider.secretTool.store(label: "signal test", ["service": "signals", "user": "ada"], secret: secret).succeeded)
        #expect(try provider.secretTool.lookup(["service": "signals"], expecting: secret) == secret)
        try provider.lock()
        let between = try lines(of: monitor, until: "PropertiesChanged")
        #expect(!between.contains { $0.contains("ItemCreated") || $0.contains("ItemChanged") }, "another program heard: \(between)")
    }
}
