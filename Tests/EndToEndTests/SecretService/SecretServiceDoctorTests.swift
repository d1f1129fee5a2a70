import Foundation
import Testing
import TresorKit
import TresorTestSupport

/// `tresor doctor` names who answers the Secret Service, and a tresord that finds the name
/// taken says so and keeps serving its socket.
@Suite(
    .blocksItsThread, .serialized,
    .enabled(
        if: SecretService.toolsInstalled,
        "needs dbus-daemon, secret-tool, gnome-keyring, gcc and Debian's Python clients (scripts/test installs them)"))
struct SecretServiceDoctorTests {
    private func secretServiceFinding(_ harness: Harness) throws -> EnvironmentFindingView {
        // Exit status 1 when something else in this environment is a problem: the JSON is there either way.
        let result = try harness.tresor(["doctor", "--json"])
        let report = try JSONDecoder().decode(DoctorView.self, from: Data(result.stdout.utf8))
        return try #require(report.daemon?.first { $0.check == "secretService" }, "doctor printed: \(result.stdout)")
    }

    @Test func doctorSaysTresorAnswers() throws {
        let provider = try TresorProvider()
        let finding = try secretServiceFinding(provider.harness)
        #expect(finding.severity == "ok")
        #expect(finding.summary.contains("Tresor answers"))
        #expect(finding.reason.contains("python3"), "the interpreters' shared identity is said: \(finding.reason)")
    }

    /// A client that asks before `tresor init` is told so — not "the request could not be served".
    @Test func aClientBeforeInitIsToldToRunTresorInit() throws {
        let bus = try PrivateBus()
        let harness = try Harness(environment: bus.environment)
        try harness.startDaemon(extraArguments: ["--secret-service"])
        try bus.waitFor(SecretService.busName, by: "tresord", running: { harness.daemonIsRunning }, log: { harness.daemonLog })
        let asked = try SecretTool(harness: harness).run(["search", "service", "before-init"])
        #expect(asked.stderr.contains("run `tresor init` first"), "\(asked.stderr)")
    }

    @Test func anotherProviderIsNamedAndTresordKeepsServingItsSocket() throws {
        let bus = try PrivateBus()
        let keyring = try GnomeKeyring(bus: bus, password: "e2e-gk-\(UUID().uuidString.prefix(8))")
        let harness = try Harness(environment: bus.environment)
        // Asked to answer, it finds the name taken: it says why, and the socket API still works.
        try harness.startDaemon(extraArguments: ["--secret-service"])
        #expect(try harness.tresor(["init", "--no-passcode"]).succeeded)
        #expect(harness.daemonLog.contains("Secret Service not started"))
        #expect(harness.daemonLog.contains("another Secret Service provider owns org.freedesktop.secrets"))
        let finding = try secretServiceFinding(harness)
        #expect(finding.severity == "warning")
        #expect(finding.summary.contains("gnome-keyring"), "\(finding.summary)")
        #expect(try bus.hasOwner(SecretService.busName), "gnome-keyring still holds the name")
        withExtendedLifetime(keyring) {}
    }
}

/// `tresor doctor --json`: the daemon's findings.
struct DoctorView: Decodable {
    var daemon: [EnvironmentFindingView]?
}

/// A doctor finding as `tresor doctor --json` prints it.
struct EnvironmentFindingView: Decodable {
    var check: String
    var severity: String
    var summary: String
    var reason: String
}
