import FoundationEssentials
import Glibc

/// Tresor is a per-user keychain. Running it as root for a user's home creates root-owned files
/// the user then cannot use, and gives a root process's privileges to every request it serves.
enum RunningAsRootCheck {
    static let id = "running-as-root"

    static func run(_ context: EnvironmentCheckContext) -> EnvironmentFinding {
        guard context.userID == 0 else {
            return EnvironmentFinding(
                check: id, severity: .ok,
                summary: "running as uid \(context.userID), not root",
                reason: "Tresor runs with the rights of the user whose secrets it keeps.")
        }
        let home = context.home.standardizedFileURL.path
        let owner = EnvironmentProbe.status(home)?.owner
        if let owner, owner != 0 {
            return EnvironmentFinding(
                check: id, severity: .problem,
                summary: "running as root for home \(home) owned by uid \(owner)",
                reason: "Root would create files the user cannot read and serve the user's secrets with root's rights. "
                    + "Run tresor and tresord as the user who owns the home.")
        }
        return EnvironmentFinding(
            check: id, severity: .warning,
            summary: "running as root (home \(home) \(owner == nil ? "does not exist yet" : "belongs to root"))",
            reason: "Keeping secrets as root works but any bug then runs with full privileges; "
                + "running as a normal user with its own home is recommended.")
    }
}
