import Foundation
import Testing
import TresorTestSupport

@testable import TresorDaemon

/// `config.json`: every key the daemon reads is in docs/FORMAT.md's table of settings, and the
/// table names no key it does not read — the table a user checks a misspelt key against.
@Suite struct ConfigurationFileTests {
    @Test func theTableOfSettingsNamesEveryKeyTheDaemonReadsAndNoOther() throws {
        let format = try String(contentsOf: Repository.file("docs/FORMAT.md"), encoding: .utf8)
        let section = try #require(format.components(separatedBy: "### Settings (`config.json`)").dropFirst().first)
        let table = section.components(separatedBy: "\n\n").first { $0.hasPrefix("| key") } ?? ""
        // The first cell of every row but the header and its rule: one key, or several, in backquotes.
        let documented = table.split(separator: "\n").dropFirst(2).flatMap { row in
            (row.split(separator: "|").first ?? "").split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) }
        }
        #expect(Set(documented).count == documented.count, "a key listed twice: \(documented)")
        #expect(
            Set(documented) == ConfigurationFile.settings,
            "documented but not read: \(Set(documented).subtracting(ConfigurationFile.settings)); read but not documented: \(ConfigurationFile.settings.subtracting(documented))"
        )
        #expect(ConfigurationFile.settings.contains("webPort") && ConfigurationFile.settings.contains("autoLockSeconds"))
    }
}
