import Foundation
import Testing
import TresorKeybag
import TresorTestSupport

@testable import TresorKeychain

/// The keychain-access application (the `tresor` CLI) is not a skeleton key: any process of the
/// user can run it, so it reveals or replaces a secret, and changes, deletes or plants another
/// application's item, only with the user present — the passcode, an approval, or a terminal
/// session — unless the item is readable by scripts (docs/SECURITY.md, "Terminal sessions").
@Suite struct KeychainAccessPresenceTests {
    func homeWithItems() throws -> (home: KeychainHome, cli: KeychainItem, app: KeychainItem) {
        let home = try KeychainHome()
        let cli = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "cli", account: "c"), secret: secret("cli-secret"),
            caller: Callers.keychainAccess())
        let app = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "app", account: "a"), secret: secret("app-secret"), caller: Callers.appA)
        return (home, cli, app)
    }

    func reveal(_ item: KeychainItem, in home: KeychainHome, as caller: Caller) throws -> Data? {
        try home.keychain.copyMatching(ItemQuery(.genericPassword, id: item.id, returnData: true), caller: caller).first?.secret
    }

    @Test func revealingNeedsThePasscodeOrATerminalSession() throws {
        let (home, cli, app) = try homeWithItems()
        for item in [cli, app] {
            expectKeychainError(.presenceRequired, "no proof") { try reveal(item, in: home, as: Callers.keychainAccess()) }
            expectKeychainError(.authFailed, "a wrong passcode") {
                try reveal(item, in: home, as: Callers.keychainAccess(passcode: passcode("wrong")))
            }
            #expect(try reveal(item, in: home, as: Callers.keychainAccess(passcode: home.passcode)) != nil)
            #expect(try reveal(item, in: home, as: Callers.keychainAccessAtOpenTerminal) != nil)
        }
        // The application itself still reads its own item as it always did.
        #expect(try reveal(app, in: home, as: Callers.appA) == secret("app-secret"))
        // Attributes alone need nothing.
        #expect(try home.keychain.copyMatching(ItemQuery(.genericPassword, limit: .all), caller: Callers.keychainAccess()).count == 2)
    }

    @Test func aTerminalSessionIsNoAnswerToUserPresence() throws {
        let home = try KeychainHome()
        var attributes = genericPassword(service: "bank", account: "ada")
        attributes.accessControl = .userPresence
        let item = try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("pin"), caller: Callers.keychainAccess())
        expectKeychainError(.presenceRequired) { try reveal(item, in: home, as: Callers.keychainAccessAtOpenTerminal) }
        var approved = Callers.keychainAccess()
        approved.presenceConfirmed = true
        #expect(try reveal(item, in: home, as: approved) == secret("pin"))
    }

    @Test func replacingTheCLIsOwnSecretNeedsPresence() throws {
        let (home, cli, _) = try homeWithItems()
        let query = ItemQuery(.genericPassword, id: cli.id)
        expectKeychainError(.presenceRequired) {
            try home.keychain.update(query, changes: ItemAttributes(), secret: secret("planted"), caller: Callers.keychainAccess())
        }
        #expect(try reveal(cli, in: home, as: Callers.keychainAccessAtOpenTerminal) == secret("cli-secret"))
        // Renaming its own item does not.
        var label = ItemAttributes()
        label.label = "Mail"
        #expect(try home.keychain.update(query, changes: label, secret: nil, caller: Callers.keychainAccess()) == 1)
    }

    @Test func anotherApplicationsItemIsChangedDeletedOrPlantedOnlyWithPresence() throws {
        let (home, _, app) = try homeWithItems()
        let query = ItemQuery(.genericPassword, id: app.id)
        var label = ItemAttributes()
        label.label = "renamed"
        expectKeychainError(.presenceRequired) { try home.keychain.update(query, changes: label, secret: nil, caller: Callers.keychainAccess()) }
        expectKeychainError(.presenceRequired) { try home.keychain.delete(query, caller: Callers.keychainAccess()) }
        expectKeychainError(.presenceRequired) {
            try home.keychain.add(
                .genericPassword, attributes: genericPassword(service: "planted", account: "a", group: "A.app"), secret: secret("x"),
                caller: Callers.keychainAccess())
        }
        let untouched = try home.keychain.copyMatching(ItemQuery(.genericPassword, limit: .all), caller: Callers.appA)
        #expect(untouched.map(\.id) == [app.id] && untouched.first?.attributes?.label == nil)

        #expect(try home.keychain.update(query, changes: label, secret: nil, caller: Callers.keychainAccessAtOpenTerminal) == 1)
        #expect(try home.keychain.delete(query, caller: Callers.keychainAccess(passcode: home.passcode)) == 1)
    }

    @Test func itemsReadableByScriptsNeedNoPresence() throws {
        let home = try KeychainHome()
        var attributes = genericPassword(service: "ci", account: "bot")
        attributes.readableByScripts = true
        let readable = try home.keychain.add(.genericPassword, attributes: attributes, secret: secret("ci-token"), caller: Callers.keychainAccess())
        #expect(try reveal(readable, in: home, as: Callers.keychainAccess()) == secret("ci-token"))

        // Marking an existing item needs presence — the mark hands the secret to any process.
        let other = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "mail", account: "ada"), secret: secret("mail"), caller: Callers.keychainAccess())
        var mark = ItemAttributes()
        mark.readableByScripts = true
        expectKeychainError(.presenceRequired) {
            try home.keychain.update(ItemQuery(.genericPassword, id: other.id), changes: mark, secret: nil, caller: Callers.keychainAccess())
        }
        expectKeychainError(.presenceRequired) { try reveal(other, in: home, as: Callers.keychainAccess()) }
        #expect(
            try home.keychain.update(
                ItemQuery(.genericPassword, id: other.id), changes: mark, secret: nil, caller: Callers.keychainAccessAtOpenTerminal) == 1)
        #expect(try reveal(other, in: home, as: Callers.keychainAccess()) == secret("mail"))

        // A userPresence item cannot be marked, at add or later.
        var both = genericPassword(service: "bank", account: "ada")
        (both.accessControl, both.readableByScripts) = (.userPresence, true)
        expectKeychainError(.param) {
            try home.keychain.add(.genericPassword, attributes: both, secret: secret("pin"), caller: Callers.keychainAccess())
        }
        both.readableByScripts = nil
        let bank = try home.keychain.add(.genericPassword, attributes: both, secret: secret("pin"), caller: Callers.keychainAccess())
        expectKeychainError(.param) {
            try home.keychain.update(
                ItemQuery(.genericPassword, id: bank.id), changes: mark, secret: nil, caller: Callers.keychainAccess(passcode: home.passcode))
        }
    }

    /// Without a passcode, nothing can prove presence: the CLI's own items read as before, and
    /// another application's stay out of reach.
    @Test func withoutAPasscodeTheCLIsOwnItemsNeedNone() throws {
        let home = try KeychainHome(passcode: nil)
        let cli = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "cli", account: "c"), secret: secret("cli-secret"),
            caller: Callers.keychainAccess())
        let app = try home.keychain.add(
            .genericPassword, attributes: genericPassword(service: "app", account: "a"), secret: secret("app-secret"), caller: Callers.appA)
        #expect(try reveal(cli, in: home, as: Callers.keychainAccess()) == secret("cli-secret"))
        expectKeychainError(.presenceRequired) { try reveal(app, in: home, as: Callers.keychainAccess()) }
    }
}
