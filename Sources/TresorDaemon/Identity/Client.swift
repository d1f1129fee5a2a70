import Foundation
import TresorModel
import TresorProtocol
import TresorSystem

/// One connection to the daemon.
typealias ConnectionID = ObjectIdentifier

/// A connected client as the daemon knows it: the kernel's peer credentials and the hash of
/// the executable the kernel mapped for that process.
struct Client: Sendable {
    var connection: ConnectionID
    var credentials: PeerCredentials
    var executable: String
    var executableSHA256: Data
    /// Whether ``executable``, as the daemon sees that path, is the very file the process runs:
    /// what identifying a development build by its path needs.
    var executablePathNamesIt = false
    /// Whether the executable is the keychain-access application: the `tresor` installed beside
    /// the daemon, compared by content when the connection was identified.
    var isCLI: Bool
    /// Why the process may not be what its executable says (traced, started with a loader
    /// variable: ``BorrowedProcess``), found when the connection was identified. Such a client
    /// gets neither the CLI's nor a registered application's rights (``CallerResolver``).
    var borrowed: String? = nil
    /// The CLI's terminal, read when the connection was identified (nil for an application, or
    /// a CLI run without a controlling terminal): what a terminal session is bound to.
    var terminal: ControllingTerminal? = nil

    var description: ClientDescription {
        ClientDescription(
            pid: credentials.pid, uid: credentials.uid, executable: executable,
            executableSHA256: executableSHA256.hexString)
    }
}
