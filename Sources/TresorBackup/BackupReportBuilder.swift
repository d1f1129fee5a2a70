import TresorModel
import TresorProtocol

/// Collects a report's entries and counts as an operation goes.
struct BackupReportBuilder {
    var report: BackupReport
    /// Whether every entry is listed (a restore), or only what did not simply succeed (a create:
    /// what was not backed up; a restore's summary: what was not restored or already present).
    let listsEverything: Bool

    init(operation: String, path: String, listsEverything: Bool) {
        report = BackupReport(operation: operation, path: path)
        self.listsEverything = listsEverything
    }

    mutating func add(_ entry: BackupReportEntry) {
        count(entry.kind, entry.outcome)
        if lists(entry) { report.entries.append(entry) }
    }

    /// Adds entries handled apart (the items' thread), listed where they began.
    mutating func insert(_ entries: [BackupReportEntry], at index: Int) {
        for entry in entries { count(entry.kind, entry.outcome) }
        report.entries.insert(contentsOf: entries.filter(lists), at: index)
    }

    /// Whether the report lists `entry`. Applications and accounts always: each gives someone
    /// rights in the home, so the user sees each one a restore adds or would add.
    private func lists(_ entry: BackupReportEntry) -> Bool {
        listsEverything || entry.outcome != .backedUp && [.application, .account].contains(entry.kind)
            || ![.backedUp, .restored, .alreadyPresent].contains(entry.outcome)
    }

    /// Counts one more `kind` as `outcome`, without an entry (passphrases, folders).
    mutating func count(_ kind: BackupEntryKind, _ outcome: BackupOutcome) {
        report.counts[kind.rawValue, default: [:]][outcome.rawValue, default: 0] += 1
    }

    var handled: Int { report.counts.values.reduce(0) { $0 + $1.values.reduce(0, +) } }
}
