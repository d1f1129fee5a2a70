import Foundation
import TresorProtocol
import TresorSystem

extension TresorPaths {
    /// This device's sync account: the server, the account, where it stands, the circle's
    /// verified history and its circle keys (sealed; ``SyncAccountFile``).
    var syncAccount: URL { home.appendingPathComponent("sync-account") }
    /// The recovery key of a first join not finished yet, sealed (`RecoveryKey.sealed`): a
    /// retried join shows it; gone once the join finished.
    var syncUnfinishedJoin: URL { home.appendingPathComponent("sync-unfinished-join") }
}

/// What the home keeps of its sync account, as JSON. Nothing here opens a record: the circle
/// keys are sealed under the keybag (`CircleKeyring.sealed`), the device's private keys are in
/// `sync-device-identity` (sealed the same way), and the recovery key is never kept.
struct SyncAccountFile: Codable, Sendable {
    var server: String
    /// The web account's name, lowercased (as the server folds it).
    var account: String
    var deviceID: String
    var deviceName: String
    var membership: SyncMembership
    /// The join request waited on.
    var requestID: String?
    /// The circle the fingerprint words were shown for (a waiting device), or this device's circle.
    var circleID: String?
    /// The circle's signed lists as this device verified them (`CircleHistory.encoded`).
    var history: Data?
    /// The circle keys, sealed under the keybag for this account.
    var keyring: Data?
    /// An epoch whose key this device made (a removal, a roll) and whose shares may not all be
    /// on the server yet: shared again at the next sync, before anything is sealed under it.
    var sharingEpoch: UInt64?
    /// A device this device began to remove (`tresor sync remove`): until the list without it is
    /// stored with its new key's shares, the next sync finishes the removal.
    var removingDevice: String?
    /// The certificate authorities (PEM) the server's certificate must chain to, instead of the
    /// system's (`tresor sync join --ca-file`).
    var caCertificates: String?

    /// The account as the ledgers name it (the keychain's, the notes'): its server and name,
    /// so that another account starts them afresh.
    var ledgerAccount: String { "\(server) \(account)" }

    static let limit = 8 << 20

    static func load(_ paths: TresorPaths) throws -> SyncAccountFile? {
        let bytes: Data
        do {
            bytes = try SecureFiles.read(paths.syncAccount, limit: limit)
        } catch SecureFileError.notFound {
            return nil
        }
        do {
            return try JSONDecoder().decode(SyncAccountFile.self, from: bytes)
        } catch {
            throw APIError(.internal, "the home's sync-account file is damaged: `tresor sync leave` forgets it")
        }
    }

    func save(_ paths: TresorPaths) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try SecureFiles.writeAtomically(try encoder.encode(self), to: paths.syncAccount)
    }
}
