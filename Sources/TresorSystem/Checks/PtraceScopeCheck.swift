import FoundationEssentials

/// With Yama's ptrace_scope at 0, any process of the same user (a compromised browser, a
/// malicious script) can attach to tresord and read unlocked keys from its memory.
enum PtraceScopeCheck {
    static let id = "ptrace-scope"

    static func run(_ context: EnvironmentCheckContext) -> EnvironmentFinding {
        let file = context.procRoot.appendingPathComponent("sys/kernel/yama/ptrace_scope")
        let reason =
            "Any process of the same user can attach to Tresor and read its memory. "
            + "Set kernel.yama.ptrace_scope=1 (sysctl) to allow only parents to trace their children."
        guard let value = EnvironmentProbe.readLine(file) else {
            return EnvironmentFinding(
                check: id, severity: .warning,
                summary: "ptrace_scope not available (Yama not enabled)", reason: reason)
        }
        guard let scope = Int(value) else {
            return EnvironmentFinding(
                check: id, severity: .warning,
                summary: "ptrace_scope has an unexpected value: \(value)", reason: reason)
        }
        if scope <= 0 {
            return EnvironmentFinding(
                check: id, severity: .warning, summary: "ptrace_scope is \(scope)", reason: reason)
        }
        return EnvironmentFinding(
            check: id, severity: .ok,
            summary: "ptrace_scope is \(scope)",
            reason: "Other processes of the same user cannot attach to Tresor (tresord also makes itself non-dumpable).")
    }
}
