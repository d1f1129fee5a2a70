import Foundation
import Testing
import TresorSecurity
import TresorTestSupport

/// The calls of Apple's keychain samples ("Adding a password to the keychain", "Searching for
/// keychain items", "Updating and deleting keychain items"), as `Examples/WebsitePassword`
/// makes them, run as a registered application of its own.
@Suite(.blocksItsThread) struct AppleSampleIdiomTests {
    @Test func addSearchUpdateDeleteAnInternetPassword() throws {
        let daemon = try TresordFixture(passcode: IdiomSecrets.passcode)
        let example = TresordFixture.binaries.appendingPathComponent("website-password")
        try daemon.register(id: "EXAMPLE.website", team: "EXAMPLE", executable: example)

        #expect(try daemon.run(example, ["show"]) == (0, "no password saved\n"))
        #expect(try daemon.run(example, ["save"], input: "ada\n\(IdiomSecrets.first)\n") == (0, "saved\n"))
        #expect(
            try daemon.run(example, ["save"], input: "ada\n\(IdiomSecrets.first)\n")
                == (1, "error -25299: The specified item already exists in the keychain.\n"))
        #expect(try daemon.run(example, ["show"]) == (0, "ada \(IdiomSecrets.first)\n"))
        #expect(try daemon.run(example, ["change"], input: "grace\n\(IdiomSecrets.second)\n") == (0, "changed\n"))
        #expect(try daemon.run(example, ["show"]) == (0, "grace \(IdiomSecrets.second)\n"))
        #expect(try daemon.run(example, ["forget"]) == (0, "forgotten\n"))
        #expect(try daemon.run(example, ["forget"]) == (0, "forgotten\n"), "already gone is not an error")
        #expect(try daemon.run(example, ["show"]) == (0, "no password saved\n"))
        // The item was the example's own: the CLI lists nothing of its group now.
        let listed = try daemon.run(TresordFixture.binaries.appendingPathComponent("tresor"), ["item", "find", "--json"])
        #expect(listed.output.contains("itemNotFound"))
        #expect(!listed.output.contains("EXAMPLE.website"))
        for bytes in try daemon.storedBytes() {
            for secret in IdiomSecrets.all { #expect(bytes.range(of: Data(secret.utf8)) == nil) }
        }
    }
}
