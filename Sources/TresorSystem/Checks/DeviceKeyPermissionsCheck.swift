import FoundationEssentials
import Glibc

/// The device key lives outside the home (`$XDG_STATE_HOME/tresor/`), so the home's own check
/// does not see it: its folder must be 0700 and the key a 0600 file, both the user's — with
/// the home's files, it opens every class that needs no passcode.
enum DeviceKeyPermissionsCheck {
    static let id = "device-key-permissions"

    static func run(_ context: EnvironmentCheckContext) -> EnvironmentFinding {
        guard let key = context.deviceKey?.standardizedFileURL.path else {
            return EnvironmentFinding(
                check: id, severity: .ok, summary: "device key not checked (no location given)",
                reason: "Only a check that knows the home's paths looks at its device key.")
        }
        let folder = URL(fileURLWithPath: key).deletingLastPathComponent().path
        guard let keyStatus = EnvironmentProbe.status(key) else {
            if EnvironmentProbe.status(TresorPaths(home: context.home.path, environment: context.environment).keybag.path) != nil {
                return EnvironmentFinding(
                    check: id, severity: .problem, summary: "this home has a keybag but no device key at \(key)",
                    reason: "The keybag's class keys are wrapped under the device key too: without it nothing opens, not even "
                        + "with the passcode. A home moved from another path has its key named for that path: "
                        + "tresor status names the key that opens it, to rename. Otherwise restore the file from where it was "
                        + "(a copy of $XDG_STATE_HOME/tresor/); tresor init would not make a new one for a home that has a keybag.")
            }
            return EnvironmentFinding(
                check: id, severity: .warning, summary: "no device key at \(key) yet (run tresor init)",
                reason: "tresor init creates it, 0600 in a 0700 folder; an existing home that has none cannot be opened.")
        }
        var offenders: [String] = []
        if let folderStatus = EnvironmentProbe.status(folder) {
            if folderStatus.kind != .directory {
                offenders.append("\(folder)/ (not a real folder)")
            } else if let issue = EnvironmentProbe.issue(of: folderStatus, want: 0o700, uid: context.userID) {
                offenders.append("\(folder)/ (\(issue))")
            }
        }
        if keyStatus.kind != .regular {
            offenders.append("\(key) (not a regular file\(keyStatus.kind == .symlink ? ": a symbolic link" : ""))")
        } else if let issue = EnvironmentProbe.issue(of: keyStatus, want: 0o600, uid: context.userID) {
            offenders.append("\(key) (\(issue))")
        }
        guard offenders.isEmpty else {
            return EnvironmentFinding(
                check: id, severity: .problem, summary: "device key exposed: " + EnvironmentProbe.list(offenders),
                reason: "Whoever reads the device key and the home's files opens every class that needs no passcode, and "
                    + "confirms guesses of the rest offline. Fix with: chmod 700 on the folder, chmod 600 on the key, owned by you.")
        }
        return EnvironmentFinding(
            check: id, severity: .ok, summary: "device key \(key) is 0600 in a 0700 folder of uid \(context.userID)",
            reason: "Other local users cannot read or replace it.")
    }
}
