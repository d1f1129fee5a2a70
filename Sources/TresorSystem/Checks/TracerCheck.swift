import FoundationEssentials

/// A process attached with ptrace (a debugger, strace) reads and changes all of our memory,
/// including unlocked keys and secrets as they pass through.
enum TracerCheck {
    static let id = "tracer"

    static func run(_ context: EnvironmentCheckContext) -> EnvironmentFinding {
        let statusFile = context.procRoot.appendingPathComponent("self/status")
        guard let text = EnvironmentProbe.readText(statusFile),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("TracerPid:") }),
            let pid = Int(line.dropFirst("TracerPid:".count).trimmingWhitespace())
        else {
            return EnvironmentFinding(
                check: id, severity: .warning,
                summary: "cannot read TracerPid from \(statusFile.path)",
                reason: "Whether a debugger is attached could not be verified; is /proc mounted?")
        }
        if pid != 0 {
            return EnvironmentFinding(
                check: id, severity: .problem,
                summary: "a tracer is attached: pid \(pid)",
                reason: "The tracing process can read every secret and key in this process's memory. "
                    + "Unless you are debugging on purpose, find out what pid \(pid) is and stop it.")
        }
        return EnvironmentFinding(
            check: id, severity: .ok,
            summary: "no tracer attached",
            reason: "No debugger or strace is reading this process's memory.")
    }
}
