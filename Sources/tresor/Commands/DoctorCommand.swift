import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorProtocol
import TresorSystem

struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the environment Tresor runs in, and say why each finding matters.",
        discussion: """
            Checks this command's own process and, when the daemon is running, asks the daemon \
            for its view (tracer, core dumps, user). Exits with status 1 if a problem is found.
            """)

    @OptionGroup var options: GlobalOptions

    struct Report: Encodable {
        var client: [EnvironmentFinding]
        var daemon: [EnvironmentFinding]?
        var disclaimer: String
    }

    func run() throws {
        var problem = false
        try Output.run(options) {
            let paths = options.paths
            var executables = [
                URL(fileURLWithPath: ProcessImage.ownExecutablePath ?? CommandLine.arguments[0])
            ]
            if let daemon = CompanionExecutable.path(CompanionExecutable.daemon) { executables.append(URL(fileURLWithPath: daemon)) }
            let local = EnvironmentChecks.run(EnvironmentCheckContext(home: paths.home, deviceKey: paths.deviceKey, executables: executables))
            let daemon = try? TresorClient.connect(paths: paths, startDaemon: false).doctor().findings
            let report = Report(client: local, daemon: daemon, disclaimer: EnvironmentChecks.disclaimer)
            problem = (local + (daemon ?? [])).contains { $0.severity == .problem }
            if options.json { return Output.json(report) }
            print("This process (tresor):")
            local.forEach(printFinding)
            if let daemon {
                print("\nThe daemon (tresord):")
                daemon.forEach(printFinding)
            } else {
                print("\nThe daemon is not running; its own checks were not made.")
            }
            print("\n" + EnvironmentChecks.disclaimer)
        }
        if problem { throw ExitCode(1) }
    }

    private func printFinding(_ finding: EnvironmentFinding) {
        print("  [\(finding.severity.rawValue)] \(finding.summary)")
        if finding.severity != .ok { print("      \(finding.reason)") }
    }
}
