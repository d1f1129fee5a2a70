import Foundation
import Testing
import TresorKit
import TresorTestSupport

/// `tresor item … --synchronizable` against the real daemon: Apple's `kSecAttrSynchronizable`,
/// which a search must name to find such an item (docs/CLI.md, "Items").
@Suite(.blocksItsThread, .serialized) struct SynchronizableCLITests {
    @Test func anItemMarkedSynchronizableIsFoundOnlyBySearchesThatSaySo() throws {
        let harness = try Harness.initialized(passcode: "e2e-synchronizable-passcode")
        let added = try harness.tresor(
            ["item", "add", "--service", "mail.example.com", "--account", "ada", "--synchronizable", "--readable-by-scripts", "--secret-stdin"],
            input: "s3cret\n")
        #expect(added.succeeded, "\(added.stderr)")
        #expect(try harness.tresor(["item", "get", "--service", "mail.example.com", "--account", "ada"]).status == 1)
        let found = try harness.tresor(["item", "get", "--service", "mail.example.com", "--account", "ada", "--synchronizable"])
        #expect(found.stdout == "s3cret", "\(found.stderr)")
        let shown = try harness.json([KeychainItem].self, ["item", "find", "--service", "mail.example.com", "--synchronizable"])
        #expect(shown.first?.attributes?.synchronizable == true)

        let stopped = try harness.tresor(["item", "update", "--service", "mail.example.com", "--synchronizable", "--set", "synchronizable=false"])
        #expect(stopped.succeeded, "\(stopped.stderr)")
        #expect(try harness.tresor(["item", "get", "--service", "mail.example.com", "--account", "ada"]).stdout == "s3cret")
        let refused = try harness.tresor(["item", "update", "--service", "mail.example.com", "--set", "synchronizable=maybe"])
        #expect(refused.status != 0 && refused.stderr.contains("synchronizable is true or false"), "\(refused.status) \(refused.stderr)")
    }
}
