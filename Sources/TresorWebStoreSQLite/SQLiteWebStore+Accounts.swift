import Foundation
import TresorNotes
import TresorNotesDomain

extension SQLiteWebStore: AccountStore {
    public var minimumIterations: Int { (try? opened().minimumIterations) ?? 1 }

    public func registerAccount(name: String, password: AccountPassword) async throws -> WebAccount {
        try await run { try $0.registerAccount(name: name, password: password) }
    }

    public func authenticate(name: String, password: AccountPassword) async throws -> WebAccount? {
        try await run { try $0.authenticate(name: name, password: password) }
    }

    public func checkPassword(_ password: AccountPassword, account: AccountID) async throws -> Bool {
        try await run { try $0.checkPassword(password, account: account) }
    }

    public func changePassword(account: AccountID, current: AccountPassword, to new: AccountPassword) async throws -> Bool {
        try await run { try $0.changePassword(account: account, current: current, to: new) }
    }

    public func setPassword(account: AccountID, to new: AccountPassword) async throws {
        try await run { try $0.setPassword(account: account, to: new) }
    }

    public func account(named name: String) async throws -> WebAccount? {
        try await run { try $0.webAccount(named: name) }
    }
}
