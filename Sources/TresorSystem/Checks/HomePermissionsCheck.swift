import FoundationEssentials
import Glibc

/// The home must be a private folder: owned by the user, 0700, with every file 0600 and every
/// sub-folder 0700, so no other local user can read or swap the encrypted database or device key.
enum HomePermissionsCheck {
    static let id = "home-permissions"

    static func run(_ context: EnvironmentCheckContext) -> EnvironmentFinding {
        let home = context.home.standardizedFileURL.path
        guard let status = EnvironmentProbe.status(home) else {
            if errno == ENOENT {
                return EnvironmentFinding(
                    check: id, severity: .warning,
                    summary: "home \(home) does not exist yet (run tresor init)",
                    reason: "Nothing to check until the home is created; tresor init creates it with mode 0700.")
            }
            let error = String(cString: strerror(errno))
            return EnvironmentFinding(
                check: id, severity: .problem,
                summary: "cannot inspect home \(home): \(error)",
                reason: "The home's modes and owner could not be verified; fix access to the folder and run tresor doctor again.")
        }
        guard status.kind == .directory else {
            return EnvironmentFinding(
                check: id, severity: .problem,
                summary: "home \(home) is not a directory" + (status.kind == .symlink ? " (it is a symbolic link)" : ""),
                reason: "The home must be a real folder owned by you; a link could point Tresor at a folder someone else controls.")
        }

        var offenders: [String] = []
        if let issue = EnvironmentProbe.issue(of: status, want: 0o700, uid: context.userID) {
            offenders.append("\(home) (\(issue))")
        }
        walk(home, relative: "", uid: context.userID, into: &offenders)

        if offenders.isEmpty {
            return EnvironmentFinding(
                check: id, severity: .ok,
                summary: "home \(home) is 0700 and every entry is private to uid \(context.userID)",
                reason: "Other local users cannot read, replace or list the keychain files.")
        }
        return EnvironmentFinding(
            check: id, severity: .problem,
            summary: "\(offenders.count) home entr\(offenders.count == 1 ? "y" : "ies") with wrong mode or owner: "
                + EnvironmentProbe.list(offenders),
            reason: "Files readable or writable by others let them copy the encrypted keychain with its device key, "
                + "or replace it. Fix with: chmod 700 on folders, chmod 600 on files, owned by you (uid \(context.userID)).")
    }

    /// Recursively collects entries below `path` that are not 0600 files / 0700 folders owned by `uid`.
    private static func walk(_ path: String, relative: String, uid: UInt32, into offenders: inout [String]) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
            offenders.append("\(relative.isEmpty ? path : relative) (cannot list)")
            return
        }
        for name in names.sorted() {
            let full = path + "/" + name
            let rel = relative.isEmpty ? name : relative + "/" + name
            guard let status = EnvironmentProbe.status(full) else { continue }  // vanished meanwhile
            switch status.kind {
            case .directory:
                if let issue = EnvironmentProbe.issue(of: status, want: 0o700, uid: uid) { offenders.append("\(rel)/ (\(issue))") }
                // lstat never reports a link as a directory, so this cannot loop.
                walk(full, relative: rel, uid: uid, into: &offenders)
            case .regular:
                if let issue = EnvironmentProbe.issue(of: status, want: 0o600, uid: uid) { offenders.append("\(rel) (\(issue))") }
            case .symlink:
                // Tresor never creates links; one could redirect a write outside the home.
                offenders.append("\(rel) (unexpected symbolic link)")
            case .other:
                // Sockets and the like: at least keep them private.
                if status.mode & 0o077 != 0 || status.owner != uid {
                    offenders.append("\(rel) (\(EnvironmentProbe.octal(status.mode)), owner \(status.owner))")
                }
            }
        }
    }
}
