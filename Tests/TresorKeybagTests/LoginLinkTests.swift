import Crypto
import Foundation
import Testing
import TresorCrypto
import TresorTestSupport

@testable import TresorKeybag

/// The login link: a second key slot under the login password, beside the passcode's.
@Suite struct LoginLinkTests {
    let home = TemporaryHome()
    let clock = TestClock()

    func linkedKeybag() throws -> Keybag {
        let keybag = try Keybag.create(paths: home.paths, passcode: passcode("the-passcode"), settings: TestKeybag.settings(clock))
        try keybag.linkLogin(passcode: passcode("the-passcode"), loginPassword: passcode("login-1"))
        return try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
    }

    @Test func theLoginPasswordOpensEveryClassKeyAndThePasscodeStillDoes() throws {
        let created = try Keybag.create(paths: home.paths, passcode: passcode("the-passcode"), settings: TestKeybag.settings(clock))
        let before = try ProtectionClass.allCases.map { bytes(of: try created.classKey(for: $0)) }
        try created.linkLogin(passcode: passcode("the-passcode"), loginPassword: passcode("login-1"))

        let reopened = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        #expect(reopened.lockState == .lockedSinceStart)
        try reopened.unlock(loginPassword: passcode("login-1"))
        #expect(reopened.lockState == .unlocked)
        #expect(try ProtectionClass.allCases.map { bytes(of: try reopened.classKey(for: $0)) } == before)

        let again = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        try again.unlock(passcode: passcode("the-passcode"))
        #expect(again.lockState == .unlocked, "linking leaves the passcode as it was")
    }

    @Test func theLoginPasswordIsNotStored() throws {
        _ = try linkedKeybag()
        let file = try home.bytes(home.paths.loginLink)
        #expect(file.range(of: Data("login-1".utf8)) == nil)
        #expect(file.range(of: Data("the-passcode".utf8)) == nil)
    }

    @Test func linkingNeedsThePasscodeAndAWrongOneIsCounted() throws {
        let keybag = try Keybag.create(paths: home.paths, passcode: passcode("the-passcode"), settings: TestKeybag.settings(clock))
        #expect(throws: KeybagError.wrongPasscode(failedAttempts: 1, retryAfterSeconds: nil)) {
            try keybag.linkLogin(passcode: passcode("not-it"), loginPassword: passcode("login-1"))
        }
        #expect(!FileManager.default.fileExists(atPath: home.paths.loginLink.path))
        #expect(keybag.loginLinkStatus == nil)
    }

    @Test func aLoginPasswordThatDoesNotOpenIsNeverAWrongPasscode() throws {
        let keybag = try linkedKeybag()
        for attempt in 1...3 {
            #expect(throws: KeybagError.loginPasswordDidNotOpen(retryAfterSeconds: nil)) {
                try keybag.unlock(loginPassword: passcode("guess-\(attempt)"))
            }
        }
        #expect(keybag.lockState == .lockedSinceStart)
        #expect(keybag.status.failedAttempts == 0, "the passcode's count is untouched")
        #expect(keybag.status.retryAfterSeconds == nil)
        let link = try #require(keybag.loginLinkStatus)
        #expect(link.failedAttempts == 3)
        #expect(link.stale == .passwordDidNotOpen)
        // The passcode opens at once, with no delay from the link's failures.
        try keybag.unlock(passcode: passcode("the-passcode"))
    }

    @Test func guessesAtTheLinkAreDelayedOnTheLinkAndSurviveARestart() throws {
        let keybag = try linkedKeybag()
        for attempt in 1...5 { _ = try? keybag.unlock(loginPassword: passcode("guess-\(attempt)")) }
        let reopened = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        #expect(throws: KeybagError.loginLinkThrottled(retryAfterSeconds: 60)) { try reopened.unlock(loginPassword: passcode("login-1")) }
        #expect(reopened.status.failedAttempts == 0)
        clock.advance(by: 61)
        try reopened.unlock(loginPassword: passcode("login-1"))
        let link = try #require(reopened.loginLinkStatus)
        #expect(link.failedAttempts == 0, "a password that opens clears the link's count")
        #expect(link.stale == nil, "and shows the link matches")
    }

    @Test func aPasswordChangeWithTheOldOneFollowsAndTheOldNoLongerOpens() throws {
        let keybag = try linkedKeybag()
        try keybag.changeLoginPassword(old: passcode("login-1"), to: passcode("login-2"))
        #expect(keybag.lockState == .lockedSinceStart, "following a change does not unlock")
        #expect(throws: KeybagError.loginPasswordDidNotOpen(retryAfterSeconds: nil)) { try keybag.unlock(loginPassword: passcode("login-1")) }
        try keybag.unlock(loginPassword: passcode("login-2"))
        #expect(keybag.loginLinkStatus?.stale == nil)
    }

    @Test func aChangeWithAWrongOldPasswordLeavesTheLink() throws {
        let keybag = try linkedKeybag()
        let file = try home.bytes(home.paths.loginLink)
        #expect(throws: KeybagError.loginPasswordDidNotOpen(retryAfterSeconds: nil)) {
            try keybag.changeLoginPassword(old: passcode("not-it"), to: passcode("login-2"))
        }
        #expect(try home.bytes(home.paths.loginLink) != file, "the failure is counted on the link")
        try keybag.unlock(loginPassword: passcode("login-1"))
    }

    @Test func markedStaleTheLinkKeepsWorkingWithTheOldPassword() throws {
        let keybag = try linkedKeybag()
        try keybag.markLoginLinkStale(.passwordChangedWithoutOld)
        let reopened = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        #expect(reopened.loginLinkStatus?.stale == .passwordChangedWithoutOld)
        #expect(reopened.loginLinkStatus?.staleSince != nil)
        // Relinking with the passcode and the new password makes it current.
        try reopened.linkLogin(passcode: passcode("the-passcode"), loginPassword: passcode("login-new"))
        #expect(reopened.loginLinkStatus?.stale == nil)
        reopened.lock()
        try reopened.unlock(loginPassword: passcode("login-new"))
    }

    @Test func aPasscodeChangeKeepsTheLink() throws {
        let keybag = try linkedKeybag()
        try keybag.unlock(passcode: passcode("the-passcode"))
        try keybag.changePasscode(current: passcode("the-passcode"), to: passcode("other-passcode"))
        let reopened = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        try reopened.unlock(loginPassword: passcode("login-1"))
        #expect(reopened.lockState == .unlocked)
    }

    @Test func removingThePasscodeOrUnlinkingRemovesTheLink() throws {
        let keybag = try linkedKeybag()
        #expect(try keybag.unlinkLogin())
        #expect(!FileManager.default.fileExists(atPath: home.paths.loginLink.path))
        #expect(throws: KeybagError.loginNotLinked) { try keybag.unlock(loginPassword: passcode("login-1")) }
        #expect(try !keybag.unlinkLogin())

        try keybag.linkLogin(passcode: passcode("the-passcode"), loginPassword: passcode("login-1"))
        try keybag.removePasscode(current: passcode("the-passcode"))
        #expect(!FileManager.default.fileExists(atPath: home.paths.loginLink.path), "the link held the key the removal destroyed")
        #expect(keybag.loginLinkStatus == nil)
    }

    @Test func aKeybagWithoutPasscodeHasNothingToLink() throws {
        let keybag = try Keybag.create(paths: home.paths, passcode: nil, settings: TestKeybag.settings(clock))
        #expect(throws: KeybagError.noPasscodeSet) {
            try keybag.linkLogin(passcode: passcode("anything"), loginPassword: passcode("login-1"))
        }
    }

    @Test func aTamperedLinkFileCostsTheLinkOnly() throws {
        _ = try linkedKeybag()
        var file = try home.bytes(home.paths.loginLink)
        file[file.count - 3] ^= 0x01
        try file.write(to: home.paths.loginLink)
        let reopened = try Keybag.open(paths: home.paths, settings: TestKeybag.settings(clock))
        #expect(reopened.loginLinkStatus == nil)
        #expect(throws: KeybagError.loginNotLinked) { try reopened.unlock(loginPassword: passcode("login-1")) }
        try reopened.unlock(passcode: passcode("the-passcode"))
    }
}
