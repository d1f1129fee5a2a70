import Testing
import TresorModel
import TresorProtocol

@testable import TresorBackup

/// A report counts everything; it lists every entry, or — a create, a restore's summary — only
/// what did not simply succeed.
struct BackupReportBuilderTests {
    static let outcomes: [BackupOutcome] = [.restored, .alreadyPresent, .replaced, .conflict, .skipped, .backedUp, .leftOut]

    static func entry(_ index: Int, _ outcome: BackupOutcome) -> BackupReportEntry {
        BackupReportEntry(kind: .note, id: "\(index)", description: "note \(index)", outcome: outcome)
    }

    @Test(arguments: [true, false])
    func everythingIsCountedAndTheListIsEverythingOrWhatDidNotSucceed(listsEverything: Bool) {
        var builder = BackupReportBuilder(operation: "restore", path: "/backup", listsEverything: listsEverything)
        for (index, outcome) in Self.outcomes.enumerated() { builder.add(Self.entry(index, outcome)) }
        builder.insert([Self.entry(10, .restored), Self.entry(11, .conflict)], at: 0)
        for outcome in Self.outcomes {
            #expect(builder.report.count(.note, outcome) == (outcome == .restored || outcome == .conflict ? 2 : 1))
        }
        let listed = builder.report.entries.map(\.outcome)
        if listsEverything {
            #expect(listed == [.restored, .conflict] + Self.outcomes)
        } else {
            #expect(listed == [.conflict, .replaced, .conflict, .skipped, .leftOut])
        }
    }
}
