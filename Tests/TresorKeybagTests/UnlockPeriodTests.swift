import Foundation
import Testing
import TresorSystem
import TresorTestSupport

@testable import TresorKeybag

/// A keybag's unlocked period ends with every lock and every passcode change, so what was
/// granted in it (a terminal session) ends too.
@Suite struct UnlockPeriodTests {
    @Test func everyLockAndPasscodeChangeStartsAnotherPeriod() throws {
        let home = TemporaryHome()
        let keybag = try Keybag.create(paths: home.paths, passcode: passcode("first"), settings: TestKeybag.settings(TestClock()))
        let first = try #require(keybag.unlockPeriod)
        #expect(keybag.unlockPeriod == first, "stable while nothing happens")
        keybag.lock()
        #expect(keybag.unlockPeriod == nil, "none while locked")
        keybag.lock()
        try keybag.unlock(passcode: passcode("first"))
        let second = try #require(keybag.unlockPeriod)
        #expect(second != first, "an unlock after a lock is another period")
        try keybag.changePasscode(current: passcode("first"), to: passcode("second"))
        let third = try #require(keybag.unlockPeriod)
        #expect(third != second, "a passcode change starts another period")
        try keybag.verify(passcode: passcode("second"))
        #expect(keybag.unlockPeriod == third, "checking the passcode changes nothing")
    }
}
