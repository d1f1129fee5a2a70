import FoundationEssentials
import Testing
import TresorSystem

/// The systemd user unit in `Support/systemd/` sandboxes tresord with `ProtectSystem=strict`:
/// every folder the daemon writes under the user's home by default must be writable there, and
/// made before the sandbox is set up (a `ReadWritePaths=` folder that does not exist fails the unit).
struct SystemdUnitTests {
    static let unit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Support/systemd/tresord.service")

    /// The values of `key=` lines, `%h` standing for `home`.
    static func values(_ key: String, home: String) throws -> [String] {
        try String(contentsOf: unit, encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix("\(key)=") }
            .map { $0.dropFirst(key.count + 1).replacingOccurrences(of: "%h", with: home) }
    }

    @Test func theDefaultHomeAndTheDeviceKeysFolderAreWritableAndMadeFirst() throws {
        let home = "/home/ada"
        let paths = TresorPaths(environment: ["HOME": home])
        let writable = try Self.values("ReadWritePaths", home: home).flatMap { $0.split(separator: " ").map(String.init) }
        let made = try Self.values("ExecStartPre", home: home).filter { $0.hasPrefix("+") && $0.contains("mkdir -p") }
        for folder in [paths.home.path, paths.stateDirectory.path] {
            #expect(writable.contains(folder), "\(folder) is read-only under the unit: \(writable)")
            #expect(made.contains { $0.split(separator: " ").contains(Substring(folder)) }, "\(folder) is not made before the sandbox")
        }
    }
}
