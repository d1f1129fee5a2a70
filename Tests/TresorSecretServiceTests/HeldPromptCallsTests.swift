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

    /// A client that calls `Prompt` twice on one prompt: the first call is handed back to be
    /// answered at once, the second held.
    @Test func aSecondCallOfOnePromptHandsTheFirstBack() {
        var held = HeldPromptCalls()
        let first = promptCall(6), second = promptCall(6)
        #expect(held.hold(first, prompt: "/p/6") == nil)
        #expect(held.hold(second, prompt: "/p/6") === first)
        #expect(!held.holds(first) && held.holds(second))
        #expect(held.release("/p/6") === second)
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

    /// An unlock prompt nobody can be asked about keeps its call past the wait for `tresor unlock`,
    /// and short of the 25 s a D-Bus client waits for a reply (as a change's does); a call
    /// already answered is not held again.
    @Test func anUnlockNobodyCanBeAskedAboutIsHeldUntilItsWaitIsOver() {
        #expect(HeldPromptCalls.unlockHold > Prompts.unlockWait + 2, "the provider's 2 s tick dismisses the prompt first")
        #expect(HeldPromptCalls.unlockHold < 25 && HeldPromptCalls.changeHold < 25)
        var held = HeldPromptCalls()
        let then = Date(timeIntervalSince1970: 1_000_000), asked = promptCall(4), unasked = promptCall(5)
        held.hold(asked, prompt: "/p/4", now: then)
        held.hold(unasked, prompt: "/p/5", for: HeldPromptCalls.unlockHold, now: then)
        // The desktop's prompter says after a second that it cannot ask.
        held.holdLonger("/p/4", for: HeldPromptCalls.unlockHold, now: then.addingTimeInterval(1))
        #expect(held.expired(now: then.addingTimeInterval(Prompts.unlockWait + 0.5)).isEmpty)
        #expect(held.expired(now: then.addingTimeInterval(HeldPromptCalls.unlockHold)).map(ObjectIdentifier.init) == [ObjectIdentifier(unasked)])
        #expect(held.expired(now: then.addingTimeInterval(HeldPromptCalls.unlockHold + 1)).first === asked)
        held.holdLonger("/p/4", for: 60, now: then)
        #expect(!held.holds(asked), "answered already: not held again")
    }
}
