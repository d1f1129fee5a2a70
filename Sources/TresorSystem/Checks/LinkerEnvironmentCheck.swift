import FoundationEssentials

/// Dynamic-linker variables make the process load code chosen by whoever set the environment;
/// that code runs inside Tresor and sees every secret.
enum LinkerEnvironmentCheck {
    static let id = "ld-preload"

    /// Variables that inject code directly (problem) or redirect library lookup (warning).
    private static let injecting = ["LD_PRELOAD", "LD_AUDIT"]
    private static let redirecting = ["LD_LIBRARY_PATH"]

    static func run(_ context: EnvironmentCheckContext) -> EnvironmentFinding {
        // An empty value has no effect on the loader.
        func isSet(_ name: String) -> Bool { !(context.environment[name] ?? "").isEmpty }
        func describe(_ name: String) -> String { "\(name)=\(context.environment[name] ?? "")" }

        let injected = injecting.filter(isSet)
        let redirected = redirecting.filter(isSet)
        if !injected.isEmpty {
            return EnvironmentFinding(
                check: id, severity: .problem,
                summary: "set: " + (injected + redirected).map(describe).joined(separator: ", "),
                reason: "The dynamic linker loads the named libraries into Tresor, where they can read every secret. "
                    + "Unset these variables unless you put them there yourself.")
        }
        if !redirected.isEmpty {
            return EnvironmentFinding(
                check: id, severity: .warning,
                summary: "set: " + redirected.map(describe).joined(separator: ", "),
                reason: "Libraries may be loaded from these folders instead of the system's; "
                    + "make sure they are not writable by others, or unset the variable.")
        }
        return EnvironmentFinding(
            check: id, severity: .ok,
            summary: "LD_PRELOAD, LD_AUDIT and LD_LIBRARY_PATH are not set",
            reason: "No library is injected into the process through the environment.")
    }
}
