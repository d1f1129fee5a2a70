import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// What only the `tresor` CLI may do — register applications, create and delete keychains, grant
/// and trust on the Secret Service, answer approvals, manage web sessions, invites and sync — is
/// refused to any other program of the user, even one that sends the right passcode
/// (docs/SECURITY.md, "`tresor`, the CLI"). curl stands for that program.
@Suite(.blocksItsThread, .serialized) struct CLIOnlyRoutesTests {
    static let passcode = "e2e-cli-only-passcode"

    /// Every management route, each with a body the CLI would send.
    static let routes: [(method: String, path: String, body: String?)] = [
        ("GET", Route.applications, nil),
        (
            "POST", Route.applications,
            #"{"applicationID": "TEAM.curl", "teamID": "TEAM", "executablePath": "/usr/bin/curl", "accessGroups": ["TEAM.curl"], "passcode": "\#(passcode)"}"#
        ),
        ("POST", Route.removeApplication, #"{"applicationID": "TEAM.curl", "passcode": "\#(passcode)"}"#),
        ("POST", Route.keychains, #"{"name": "planted", "passcode": "\#(passcode)"}"#),
        ("POST", Route.deleteKeychain, #"{"name": "planted", "passcode": "\#(passcode)"}"#),
        ("GET", Route.secretServiceOwners, nil),
        ("POST", Route.secretServiceGrants, "{}"),
        ("POST", Route.secretServiceImport, "{}"),
        ("GET", Route.secretServiceTrust, nil),
        ("POST", Route.secretServiceTrust, "{}"),
        ("POST", Route.secretServiceTrustRemove, "{}"),
        ("POST", Route.approvalsNext, "{}"),
        ("POST", Route.approvalsAnswer, "{}"),
        ("GET", Route.webSessions, nil),
        ("POST", Route.endWebSessions, "{}"),
        ("POST", Route.webInvites, "{}"), ("POST", Route.webPasswordResets, "{}"),
        ("POST", Route.syncJoin, "{}"),
        ("GET", Route.syncRequests, nil),
        ("GET", Route.syncDevices, nil),
        ("POST", Route.syncLeave, nil),
    ]

    @Test func anotherProgramOfTheUserIsRefusedEveryManagementRoute() throws {
        let harness = try Harness.initialized(passcode: Self.passcode, secrets: ["e2e-mine"])
        for route in Self.routes {
            let (status, text) = try harness.curl(route.method, route.path, body: route.body.map { Data($0.utf8) })
            #expect(status == 403 && apiErrorCode(in: text) == .missingEntitlement, "\(route.method) \(route.path): \(status) \(text)")
        }
        // Nothing was made by the refused requests that carried the passcode.
        #expect(try harness.json([TresorKit.Application].self, ["app", "list"]).isEmpty)
        let keychains = try harness.tresor(["keychain", "list"])
        #expect(keychains.succeeded && !keychains.stdout.contains("planted"), "\(keychains.stdout)")
        // The CLI itself is let through.
        #expect(try harness.tresor(["keychain", "create", "mine", "--passcode-stdin"], input: "e2e-mine\ne2e-mine\n").succeeded)
        try harness.expectNoSecretLeaked()
    }
}
