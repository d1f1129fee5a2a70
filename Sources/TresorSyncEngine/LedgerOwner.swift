import Foundation
import TresorKeychain

/// Whose the keychain's sync ledger is: the account and the device identity it was kept for.
/// A device that left its account keeps its keychain and its ledger; joining again — a new
/// identity, perhaps another account — must not send what was sealed for the old one, nor read
/// the new account's records from the old account's cursor (docs/SYNC.md, "Devices": joining again).
struct LedgerOwner: Codable, Equatable {
    var account: String
    var deviceID: String
}

/// What ``SyncEngine/adoptLedger(in:account:deviceID:)`` did.
public enum LedgerAdoption: Equatable, Sendable {
    /// The ledger was this account's and this device's already (or kept before its owner was
    /// recorded, and taken as theirs).
    case unchanged
    /// The same account, a new identity of this device: the changes sealed under the old one
    /// wait to be sealed again, and its device sequence starts over.
    case newDevice(unsealed: Int)
    /// Another account: the ledger starts afresh, and every item that syncs goes to it as new.
    case newAccount
}

extension SyncEngine {
    /// Makes the login keychain's sync ledger the one of `account` as device `deviceID`, before
    /// a sync: run it first, every time.
    /// - Parameters:
    ///   - keychain: the login keychain.
    ///   - account: the sync account, as server and name.
    ///   - deviceID: this device's identity in it.
    /// - Returns: what changed.
    /// - Throws: storage errors.
    @discardableResult
    public static func adoptLedger(in keychain: KeychainStore, account: String, deviceID: String) throws -> LedgerAdoption {
        let owner = LedgerOwner(account: account, deviceID: deviceID)
        return try keychain.syncTransaction { transaction in
            let stored = try transaction.state(named: StateName.ledgerOwner).flatMap { try? JSONDecoder().decode(LedgerOwner.self, from: $0) }
            guard stored != owner else { return .unchanged }
            let adoption: LedgerAdoption
            switch stored {
            case nil:
                adoption = .unchanged
            case let stored? where stored.account != account:
                try transaction.forgetSyncAccount()
                adoption = .newAccount
            case _?:
                adoption = .newDevice(unsealed: try transaction.unsealOutbox())
                try transaction.setState(Data("0".utf8), named: StateName.deviceSequence)
            }
            try transaction.setState(try JSONEncoder().encode(owner), named: StateName.ledgerOwner)
            return adoption
        }
    }
}
