import Foundation
import Testing
import TresorKit

extension Harness {
    /// Registers this test runner as application `id` of `team`, so the test's own TresorKit
    /// calls are an application's; then makes one request, so the daemon hashes the (large)
    /// runner once rather than once per concurrent client.
    func registerTestRunner(id: String, team: String, groups: [String] = [], passcode: String) throws {
        let runner = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let registered = try tresor(
            ["app", "register", "--id", id, "--team", team, "--exe", runner, "--passcode-stdin"] + groups.flatMap { ["--group", $0] },
            input: passcode + "\n")
        try #require(registered.succeeded, "\(registered.stderr)")
        _ = try TresorKitClient.connect(self).status()
    }
}

/// A TresorKit client of a harness's daemon, never starting one.
enum TresorKitClient {
    static func connect(_ harness: Harness) throws -> TresorClient {
        try TresorClient.connect(paths: harness.paths, startDaemon: false)
    }
}
