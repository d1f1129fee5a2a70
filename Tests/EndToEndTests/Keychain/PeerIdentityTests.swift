import Foundation
import Testing
import TresorProtocol
import TresorSystem
import TresorTestSupport

/// The daemon serves only its own uid (SO_PEERCRED), and identifies clients by the
/// executable the kernel mapped.
@Suite(.blocksItsThread, .serialized) struct PeerIdentityTests {
    static var isRoot: Bool { getuid() == 0 }
    static var haveSetpriv: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") }

    /// Runs curl as `nobody` against the daemon's socket.
    func curlAsNobody(_ harness: Harness, _ path: String) throws -> Harness.Result {
        try harness.run(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            [
                "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/curl", "-s", "-w", "\n%{http_code}",
                "--unix-socket", harness.paths.socket.path, "http://tresord" + path,
            ])
    }

    @Test(.enabled(if: isRoot && haveSetpriv, "needs root and setpriv to run a client as another user"))
    func aClientOfAnotherUIDIsRejected() throws {
        // /tmp is 0700 here: the other user needs a path it can traverse.
        let harness = try Harness(base: "/var/tmp")
        try harness.startDaemon()

        // As installed, the socket folder (0700) keeps other users out altogether.
        let blocked = try curlAsNobody(harness, "/v1/status")
        #expect(blocked.stdout.hasSuffix("000"), "curl as nobody must not reach a 0700 socket folder: \(blocked.stdout)")

        // Even if the permissions were opened by mistake, the daemon refuses the peer's uid.
        for directory in [harness.root, harness.root.appendingPathComponent("run"), harness.paths.runtimeDirectory] {
            chmod(directory.path, 0o755)
        }
        chmod(harness.paths.socket.path, 0o666)
        let rejected = try curlAsNobody(harness, "/v1/status")
        #expect(rejected.stdout.hasSuffix("403"), "\(rejected.stdout)")
        let body = rejected.stdout.split(separator: "\n").dropLast().joined(separator: "\n")
        let error = try JSONDecoder().decode(ErrorResponse.self, from: Data(body.utf8)).error
        #expect(error.code == .peerRejected)
        #expect(error.message.contains("uid 65534"))
        #expect(harness.daemonLog.contains("refused a client"))
        #expect(try harness.status().keybag == .notInitialized, "the daemon keeps serving its own user")
    }

    @Test func theDaemonIdentifiesItsClientByExecutableHash() throws {
        let harness = try Harness(configuration: #"{"autoLockSeconds": 60}"#)
        try harness.startDaemon()
        let client = try TresorKitClient.connect(harness)
        let hold = try client.holdAutoLock(reason: "identity check")
        let me = ProcessImage.ownExecutablePath ?? CommandLine.arguments[0]
        #expect(hold.client.executable == me)
        #expect(hold.client.uid == getuid())
        let expected = try harness.run(URL(fileURLWithPath: "/usr/bin/sha256sum"), [me]).stdout.prefix(64)
        #expect(hold.client.executableSHA256 == String(expected))
    }
}
