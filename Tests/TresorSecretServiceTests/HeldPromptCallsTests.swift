import Foundation
import Testing
import TresorDBus

@testable import TresorSecretService

/// `Prompt` calls whose reply waits for the asker to say whether anyone can be asked.
@Suite struct HeldPromptCallsTests {
    func promptCall(_ number: Int) -> DBusMessage {
        .methodCall(
            destination: SecretServiceProvider.busName, path: SecretObjectPath.prompt(String(number)).path, interface: SecretInterface.prompt,
            member: "Prompt", arguments: [.string("")])
    }

    @Test func aHeldCallIsReleasedOnceByItsPrompt() {
        var held = HeldPromptCalls()
        let first = promptCall(1), second = promptCall(2)
        held.hold(first, prompt: "/p/1")
        held.hold(second, prompt: "/p/2")
        #expect(held.holds(first) && held.holds(second))
        #expect(!held.holds(promptCall(1)), "another message, even to the same prompt, is not held")
        #expect(held.release("/p/1") === first)
        #expect(held.release("/p/1") == nil, "released once: replied to once")
        #expect(!held.holds(first) && held.holds(second))
    }

    @Test func aHeldCallIsRepliedToAfterTheHold() {
        var held = HeldPromptCalls()
        let then = Date(timeIntervalSince1970: 1_000_000), call = promptCall(3)
        held.hold(call, prompt: "/p/3", now: then)
        #expect(held.expired(now: then.addingTimeInterval(HeldPromptCalls.hold - 0.5)).isEmpty)
        let due = held.expired(now: then.addingTimeInterval(HeldPromptCalls.hold))
        #expect(due.count == 1 && due.first === call)
        #expect(!held.holds(call) && held.release("/p/3") == nil, "not replied to twice")
    }
}
