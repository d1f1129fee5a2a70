import Foundation
import Testing
import TresorTestSupport

/// Hostile calls on the Secret Service, each followed by a normal secret-tool lookup: the
/// provider answers every call (an error where the input is impossible) and keeps serving.
@Suite(
    .blocksItsThread, .serialized,
    .enabled(
        if: SecretService.toolsInstalled,
        "needs dbus-daemon, secret-tool, gnome-keyring, gcc and Debian's Python clients (scripts/test installs them)"))
struct SecretServiceBadInputTests {
    static let canary: KeyValuePairs = ["tresor-e2e": "canary"]

    /// A provider holding one item that every test reads again at its end.
    func providerWithCanary() throws -> (TresorProvider, canary: String) {
        let provider = try TresorProvider()
        let canary = provider.marker("canary")
        try provider.secretTool.store(label: "E2E canary", Self.canary, secret: canary)
        return (provider, canary)
    }

    func expectStillServing(_ provider: TresorProvider, _ canary: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(provider.harness.daemonIsRunning, "tresord exited", sourceLocation: sourceLocation)
        #expect(
            try provider.secretTool.lookup(Self.canary, expecting: canary) == canary, "a normal lookup after the bad input",
            sourceLocation: sourceLocation)
        try provider.harness.expectNoSecretLeaked(sourceLocation: sourceLocation)
    }

    /// dh-ietf1024 public keys no honest peer sends: 0, 1 and p−1 force the shared secret into
    /// {0, 1, p−1} (RFC 2409's group has no check of its own), p is 0 mod p, and 10 KiB is no
    /// number of the group. Each is a D-Bus error; a real key and a plain session still open.
    @Test func impossibleDHPublicKeysAreRefused() throws {
        let (provider, canary) = try providerWithCanary()
        let answer = try provider.python.raw([String: Outcome<String>].self, "bad-dh")
        for key in ["zero", "zero128", "one", "pMinusOne", "p", "empty", "tenKiB"] {
            #expect(answer[key]?.failed == true, "OpenSession(dh) with the public key \(key): \(String(describing: answer[key]))")
        }
        #expect(answer["valid"]?.ok?.hasPrefix("/org/freedesktop/secrets/session/") == true, "\(String(describing: answer["valid"]))")
        #expect(answer["plain"]?.failed == false)
        try expectStillServing(provider, canary)
    }

    /// A client chooses its items' labels and attributes; `tresor secret-service owners` and
    /// `tresor item find` show them with every control and formatting character as `?`, so a
    /// label cannot clear the screen, colour it, or forge another owner's lines.
    @Test func aLabelsControlCharactersDrawNothingInTresorsListings() throws {
        let (provider, canary) = try providerWithCanary()
        let label = "evil\u{1b}[2J\u{1b}[31mRED\nexe:/usr/bin/ssh\n  1234  Fake\r\u{202e}abc"
        try provider.secretTool.store(label: label, ["tresor-e2e": "esc\u{1b}]0;title\u{07}"], secret: provider.marker("escapes"))
        let id = try provider.item(labelled: label).id
        let owners = try provider.harness.tresor(["secret-service", "owners"])
        let found = try provider.harness.tresor(["item", "find", "--id", id])
        for listing in [owners, found] {
            #expect(listing.succeeded, "\(listing.stderr)")
            #expect(!listing.stdout.contains("\u{1b}") && !listing.stdout.contains("\r") && !listing.stdout.contains("\u{202e}"), "\(listing.stdout)")
            #expect(!listing.stdout.contains("\nexe:/usr/bin/ssh"), "a forged owner line: \(listing.stdout)")
        }
        #expect(owners.stdout.contains("evil?[2J?[31mRED?exe:/usr/bin/ssh?  1234  Fake??abc"), "\(owners.stdout)")
        #expect(found.stdout.contains("esc?]0;title?"), "\(found.stdout)")
        try expectStillServing(provider, canary)
    }

    @Test func unknownObjectPathsAreErrors() throws {
        let (provider, canary) = try providerWithCanary()
        let answer = try provider.python.raw([String: Outcome<Ignored>].self, "unknown-paths")
        #expect(answer.count == 9)
        for (call, outcome) in answer.sorted(by: { $0.key < $1.key }) {
            #expect(outcome.failed, "\(call) on an object that does not exist answered without an error")
        }
        try expectStillServing(provider, canary)
    }

    /// CreateItem and SearchItems with 100,000 attributes (~6 MB): refused or served, but
    /// answered; when the item was created, searching by the same map finds it.
    @Test func aHugeAttributeMapIsAnswered() throws {
        let (provider, canary) = try providerWithCanary()
        let answer = try provider.python.raw(HugeAttributesAnswer.self, "huge-attributes", ["100000"], timeout: 120)
        if answer.createItem.ok != nil {
            #expect(answer.searchItems.ok?.first == 1, "created, then not found by its attributes: \(answer.searchItems)")
        }
        try expectStillServing(provider, canary)
    }

    /// A 1 MiB label: refused or kept whole, never cut silently.
    @Test func aOneMebibyteLabelIsAnswered() throws {
        let (provider, canary) = try providerWithCanary()
        let answer = try provider.python.raw(BigLabelAnswer.self, "big-label", ["\(1 << 20)"], timeout: 60)
        if answer.createItem.ok != nil {
            #expect(answer.labelLength?.ok == 1 << 20, "the label came back with another length: \(String(describing: answer.labelLength))")
        }
        try expectStillServing(provider, canary)
    }

    /// A Label of another type than a string is refused, as `Properties.Set` refuses it, not
    /// taken as no label.
    @Test func aLabelThatIsNotAStringIsRefused() throws {
        let (provider, canary) = try providerWithCanary()
        let answer = try provider.python.raw([String: Outcome<String>].self, "number-label")
        #expect(answer["createItem"]?.error == "org.freedesktop.DBus.Error.InvalidArgs", "\(String(describing: answer["createItem"]))")
        try expectStillServing(provider, canary)
    }

    /// 500 OpenSession calls on one connection, none closed: each is answered (a limit may
    /// refuse some), another connection still gets a session, and a lookup still works.
    @Test func aFloodOfOpenSessionCallsIsAnswered() throws {
        let (provider, canary) = try providerWithCanary()
        let answer = try provider.python.raw(OpenSessionsAnswer.self, "open-sessions", ["500"], timeout: 60)
        #expect(answer.opened + answer.errors.values.reduce(0, +) == 500)
        #expect(answer.opened > 0, "\(answer.errors)")
        #expect(answer.another.failed == false, "another connection's OpenSession: \(answer.another)")
        try expectStillServing(provider, canary)
    }
}
