import Foundation
import TresorKeychain
import TresorSync
import TresorSyncProtocol

/// A device's replication of its login keychain through a sync relay (docs/SYNC.md, "What
/// syncs", "Conflicts and deletions"): ``push()`` sends the outbox, ``pull(allowDeletions:)``
/// fetches, verifies and applies what the other devices sent, ``applyHeld()`` applies what
/// waited for an unlock. Nothing here decides by a clock but the mass-deletion window.
///
/// Every step commits in one transaction of the keychain's database with the engine's state
/// (the progress through the server's records, this device's sequence), so a crash between two
/// steps resumes where the last commit left it: nothing lost, nothing applied twice.
public final class SyncEngine: Sendable {
    let transport: any SyncRecordTransport
    let device: LocalDevice
    let list: TrustedDeviceList
    let keys: CircleKeyring
    let keychain: KeychainStore
    let clock: @Sendable () -> Date
    let pageSize: Int

    /// - Parameters:
    ///   - transport: the server's record calls.
    ///   - device: this device (its signing key seals what it sends).
    ///   - list: the trusted-device list this device holds (it names the account).
    ///   - keys: the circle keys this device holds; the newest seals.
    ///   - keychain: the login keychain.
    ///   - clock: the time the mass-deletion window is measured by — the only use of a clock.
    ///   - pageSize: the records asked for per page; by default the most a server gives, so a
    ///     first sync takes the account's records in few requests and transactions.
    public init(
        transport: any SyncRecordTransport, device: LocalDevice, list: TrustedDeviceList, keys: CircleKeyring, keychain: KeychainStore,
        clock: @escaping @Sendable () -> Date = { Date() }, pageSize: Int = SyncLimits.pageRecords
    ) {
        self.transport = transport
        self.device = device
        self.list = list
        self.keys = keys
        self.keychain = keychain
        self.clock = clock
        self.pageSize = pageSize
    }

    /// The sync account.
    public var account: String { list.account }

    /// Pushes, then pulls until this device is up to date.
    /// - Parameter allowDeletions: lets a held mass deletion through (the user confirmed it).
    /// - Returns: what the pull did.
    /// - Throws: ``SyncEngineError``, the transport's errors; what was committed before stays.
    @discardableResult
    public func sync(allowDeletions: Bool = false) async throws -> PullSummary {
        try await push()
        return try await pull(allowDeletions: allowDeletions)
    }
}

/// Why the engine stopped; what it committed before stays, and the next sync resumes.
public enum SyncEngineError: Error, Equatable, CustomStringConvertible {
    /// The server's answer to a push does not match what was sent.
    case unexpectedPushAnswer(String)
    /// This device holds no circle key to seal with.
    case noCircleKey

    public var description: String {
        switch self {
        case .unexpectedPushAnswer(let why): return "the server's answer to a push does not match it: \(why)"
        case .noCircleKey: return "this device holds no circle key"
        }
    }
}
