import Foundation
import TresorKeybag
import TresorKeychain
import TresorProtocol
import TresorSystem

/// Turns an identified client into a keychain ``Caller``: the `tresor` CLI installed beside
/// this daemon is the keychain-access application; a registered executable gets its
/// application's groups; anything else is refused with `missingEntitlement`.
struct CallerResolver: Sendable {
    /// The keychain-access application's own access group (items the CLI adds by default).
    static let cliGroup = "tresor"

    let keychains: KeychainProvider
    /// Terminals where the user opened a terminal session (`tresor unlock --for`).
    let terminalSessions: TerminalSessions
    /// Where a refused executable is named for its developer.
    let unregistered: UnregisteredExecutables

    /// The caller `client` is in `keychain` (nil: the login keychain), with the `passcode` its
    /// request carried, if any.
    func caller(for client: Client, passcode: Passcode?, keychain: String?) throws -> Caller {
        try refuseBorrowed(client)
        if client.isCLI {
            var caller = Caller(accessGroups: [Self.cliGroup], defaultAccessGroup: Self.cliGroup, seesEveryGroup: true, passcode: passcode)
            caller.atOpenTerminalSession = isAtOpenTerminalSession(client, keychain: keychain ?? KeychainName.login)
            return caller
        }
        guard let application = try application(of: client) else {
            unregistered.refused(client.executable)
            throw KeychainError.missingEntitlement(
                "\(client.executable) is not a registered application (register it with `tresor app register`)")
        }
        var caller = Caller(accessGroups: application.allowedGroups, defaultAccessGroup: application.applicationID, passcode: passcode)
        caller.lockedCandidates = .failTheSearch
        return caller
    }

    /// The notes account `client` acts for: the local account for the CLI; for an application
    /// registered with its team's notes group (`TEAM.notes`, granted with the passcode at
    /// `tresor app register`), the team's own account, which no other team, the CLI or the web
    /// reaches (docs/API.md, "Notes for applications").
    /// - Throws: `missingEntitlement` for any other client.
    func notesAccount(for client: Client) throws -> AccountID {
        try refuseBorrowed(client)
        if client.isCLI { return .local }
        guard let application = try application(of: client),
            application.accessGroups.contains(AccountID.notesGroup(ofTeam: application.teamID))
        else {
            throw KeychainError.missingEntitlement(
                "notes are for the tresor command-line tool and applications registered with their team's notes group (TEAM.notes)")
        }
        return .applications(ofTeam: application.teamID)
    }

    /// The application `client` is: the one registered with its executable's content, else a
    /// development build registered at the path of the very file it runs.
    private func application(of client: Client) throws -> Application? {
        let applications = try keychains.loginKeychain().applications
        if let registered = try applications.application(executableSHA256: client.executableSHA256), !registered.isDevelopmentBuild {
            return registered
        }
        guard client.executablePathNamesIt else { return nil }
        return try applications.application(developmentBuildAt: client.executable)
    }

    /// Whether `client` — the CLI — runs in a terminal with an open session for `keychain`.
    func isAtOpenTerminalSession(_ client: Client, keychain: String) -> Bool {
        guard client.isCLI, let terminal = client.terminal else { return false }
        return terminalSessions.isOpen(keychain: keychain, terminal: terminal, period: try? keychains.keybag(named: keychain).unlockPeriod)
    }

    /// Refuses anything but the CLI: managing applications and keychains is the user's
    /// business, done through the keychain-access tool.
    func requireCLI(_ client: Client, toManage what: String) throws {
        try refuseBorrowed(client)
        guard client.isCLI else {
            throw KeychainError.missingEntitlement("only the tresor command-line tool manages \(what)")
        }
    }

    /// A traced process, or one started with a loader variable, runs code its executable's
    /// hash does not vouch for: it gets no identity's rights (docs/SECURITY.md §3.4).
    private func refuseBorrowed(_ client: Client) throws {
        if let reason = client.borrowed { throw KeychainError.missingEntitlement(reason) }
    }
}
