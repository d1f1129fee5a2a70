import Foundation
import Testing
import TresorKeychain
import TresorSecretService

@testable import TresorDaemon

/// What the user's trust in generic Secret Service clients covers (``SecretServiceTrust``;
/// docs/SECURITY.md, "Generic clients"): a grant, the executable under any parent, until it ends;
/// a remembered approval, the executable under the very same parents in the same login session,
/// for the hours chosen — nothing more.
@Suite struct SecretServiceTrustTests {
    private let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// secret-tool run by `chain` (the own groups of its parents, then its login session).
    private func secretTool(under chain: [String]) -> SecretServiceClient {
        SecretServiceClient(
            caller: Caller(accessGroups: ["exe:/usr/bin/secret-tool"], defaultAccessGroup: "exe:/usr/bin/secret-tool"),
            executable: "/usr/bin/secret-tool", isGenericClient: true, parentChain: chain)
    }

    private let script = ["exe:/usr/bin/bash", "exe:/usr/bin/gnome-terminal", "session:1200@5000"]

    @Test func aRememberedApprovalServesTheSameParentsInTheSameSessionUntilItEnds() {
        let trust = SecretServiceTrust()
        trust.remember(secretTool(under: script), for: 8 * 3600, now: start)
        #expect(trust.trusts(secretTool(under: script), now: start.addingTimeInterval(60)))
        #expect(!trust.trusts(secretTool(under: ["exe:/usr/bin/python3.11"] + script), now: start), "another parent")
        #expect(
            !trust.trusts(secretTool(under: ["exe:/usr/bin/bash", "exe:/usr/bin/gnome-terminal", "session:1300@6000"]), now: start),
            "the same programs in another login session")
        let python = SecretServiceClient(
            caller: Caller(accessGroups: ["exe:/usr/bin/python3.11"], defaultAccessGroup: "exe:/usr/bin/python3.11"),
            executable: "/usr/bin/python3.11", isGenericClient: true, parentChain: script)
        #expect(!trust.trusts(python, now: start), "another generic client under the same parents")
        #expect(!trust.trusts(secretTool(under: script), now: start.addingTimeInterval(8 * 3600)), "the hours chosen are over")
        #expect(trust.list(now: start.addingTimeInterval(8 * 3600)).isEmpty, "and it is gone from the list")
    }

    @Test func aGrantServesAnyParentUntilItEndsOrIsTakenBack() {
        let trust = SecretServiceTrust()
        trust.grant("exe:/usr/bin/secret-tool", for: 3600, now: start)
        #expect(trust.trusts(secretTool(under: ["exe:/usr/bin/make", "session:1@1"]), now: start.addingTimeInterval(10)))
        #expect(!trust.trusts(secretTool(under: script), now: start.addingTimeInterval(3600)))
        trust.grant("exe:/usr/bin/secret-tool", for: nil, now: start)
        #expect(trust.trusts(secretTool(under: script), now: start.addingTimeInterval(400 * 24 * 3600)), "until the daemon stops")
        #expect(trust.remove("exe:/usr/bin/secret-tool") == 1)
        #expect(!trust.trusts(secretTool(under: script), now: start))
    }
}
