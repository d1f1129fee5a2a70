import FoundationEssentials

/// Whoever can replace the tresor or tresord binary, or rename a folder on its path, can run
/// their own code with the user's secrets the next time it starts.
enum WritableExecutablesCheck {
    static let id = "writable-executables"

    static func run(_ context: EnvironmentCheckContext) -> EnvironmentFinding {
        guard !context.executables.isEmpty else {
            return EnvironmentFinding(
                check: id, severity: .ok, summary: "no executables to check",
                reason: "No Tresor binary was named for this check.")
        }
        var checked = Set<String>()
        var offenders: [String] = []
        var missing: [String] = []
        for executable in context.executables {
            let path = executable.standardizedFileURL.path
            if EnvironmentProbe.status(path) == nil { missing.append(path) }
            inspect(chainOf: path, uid: context.userID, checked: &checked, offenders: &offenders)
            // A link is only as safe as what it points to: check the real file and its folders too.
            let resolved = executable.resolvingSymlinksInPath().standardizedFileURL.path
            if resolved != path {
                inspect(chainOf: resolved, uid: context.userID, checked: &checked, offenders: &offenders)
            }
        }
        let names = context.executables.map(\.lastPathComponent).joined(separator: ", ")
        let missingNote = missing.isEmpty ? "" : " (not found, folders checked: \(EnvironmentProbe.list(missing)))"
        if !offenders.isEmpty {
            return EnvironmentFinding(
                check: id, severity: .problem,
                summary: "replaceable by others: " + EnvironmentProbe.list(offenders) + missingNote,
                reason: "Another user could swap in a binary that steals secrets the next time Tresor runs. "
                    + "Binaries and every folder above them must be owned by you or root and not writable by group or others "
                    + "(chmod go-w).")
        }
        return EnvironmentFinding(
            check: id, severity: .ok,
            summary: "\(names) and \(context.executables.count == 1 ? "its" : "their") folders are not writable by others" + missingNote,
            reason: "Only you or root can replace the Tresor binaries.")
    }

    /// Checks `path` and each parent folder up to `/`, appending a description of every unsafe entry.
    private static func inspect(chainOf path: String, uid: UInt32, checked: inout Set<String>, offenders: inout [String]) {
        var current = URL(fileURLWithPath: path)
        while true {
            let p = current.path
            if checked.insert(p).inserted, let status = EnvironmentProbe.status(p), let issue = issue(of: status, uid: uid) {
                offenders.append("\(p) (\(issue))")
            }
            if p == "/" || p.isEmpty { break }
            current = current.deletingLastPathComponent()
        }
    }

    private static func issue(of status: EnvironmentProbe.Status, uid: UInt32) -> String? {
        if status.owner != uid && status.owner != 0 {
            return "owned by uid \(status.owner)"
        }
        // A link's own mode is always 0777 and means nothing; its owner was checked above.
        guard status.kind != .symlink, status.mode & 0o022 != 0 else { return nil }
        // In a sticky folder such as /tmp others cannot rename or delete entries they do not own,
        // and the entries below it are checked on their own.
        if status.kind == .directory && status.mode & 0o1000 != 0 { return nil }
        return "mode \(EnvironmentProbe.octal(status.mode)), writable by \(status.mode & 0o002 != 0 ? "others" : "group")"
    }
}
