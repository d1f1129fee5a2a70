import Foundation
import Testing
import TresorProtocol
import TresorTestSupport

/// A flood of unlock requests with a wrong passcode from the user's own processes. Each costs a
/// key derivation, run one at a time away from the daemon's event loops and from the keybag's
/// state (docs/SECURITY.md, "The Unix socket", KDF flood): while the flood is checked, another
/// client reads its item and the status. The same wrong passcode is counted once, so the flood
/// is never throttled — each request runs its derivation.
@Suite(.blocksItsThread, .serialized) struct PasscodeFloodTests {
    static let passcode = "e2e-kdf-flood-passcode"

    @Test func anotherClientIsServedWhileAFloodOfWrongPasscodesIsChecked() throws {
        let wrong = "e2e-kdf-flood-wrong"
        // At production's count, a derivation lasts long enough for another client to be served
        // while the flood is checked.
        let harness = try Harness.initialized(passcode: Self.passcode, secrets: [wrong], productionKeyDerivation: true)
        #expect(
            try harness.tresor(
                ["item", "add", "--service", "flood", "--account", "me", "--readable-by-scripts", "--secret-stdin"], input: "kdf-flood-secret\n"
            )
            .succeeded)

        // Sixteen at once, each on a connection of its own.
        let request = RawConnection.Request(method: "POST", path: Route.unlock, body: try JSONEncoder().encode(UnlockRequest(passcode: wrong)))
        let flood = try (0..<16).map { _ in
            let connection = try RawConnection(socket: harness.paths.socket.path)
            try connection.send(request)
            return connection
        }
        var answers: [Int: RawConnection.Answer] = [:]
        /// Takes every answer that has come; returns how many connections still wait for theirs.
        func collect(waiting seconds: TimeInterval) throws -> Int {
            for (index, connection) in flood.enumerated() where answers[index] == nil {
                answers[index] = try connection.answer(within: seconds)
            }
            return flood.count - answers.count
        }
        // The first answer means its key derivation ran: the others' run one after another now.
        let deadline = Date().addingTimeInterval(60)
        while try collect(waiting: 0.02) == flood.count, Date() < deadline {}
        #expect(answers.count >= 1 && answers.count < flood.count, "\(answers.count) of \(flood.count) answered at once")

        // Meanwhile another client is served: its item, and the status.
        #expect(try harness.tresor(["item", "get", "--service", "flood", "--account", "me"]).stdout == "kdf-flood-secret")
        #expect(try harness.status().keybag == .unlocked)
        #expect(try collect(waiting: 0) >= 1, "the item was read only once every wrong passcode had been checked")

        while try collect(waiting: 1) > 0, Date() < deadline {}
        #expect(answers.count == flood.count)
        for answer in answers.values {
            #expect(answer.status == 401, "\(String(decoding: answer.body, as: UTF8.self))")
        }
        #expect(try harness.status().failedAttempts == 1, "the same wrong passcode counts once")
        #expect(harness.daemonIsRunning)
        try harness.expectNoSecretLeaked()
    }
}
