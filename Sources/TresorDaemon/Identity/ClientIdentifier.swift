import Foundation
import NIOCore
import Synchronization
import TresorCrypto
import TresorKeychain
import TresorProtocol
import TresorSystem

/// Establishes who is at the other end of each connection, once per connection.
///
/// The executable is hashed through `/proc/<pid>/exe` — the file the kernel actually mapped,
/// even if the path has since been replaced — and the hash is cached by device, inode, size
/// and modification time so a client pays for hashing once per binary, not per connection.
final class ClientIdentifier: Sendable {
    private let procRoot: String
    private let allowedUID: UInt32
    /// The `tresor` installed beside the daemon: the keychain-access application.
    let cliExecutable: URL
    private let clients = Mutex<[ConnectionID: Client]>([:])

    /// - Parameters:
    ///   - allowedUID: the only uid served (the daemon's own).
    ///   - cliExecutable: the keychain-access application's executable.
    init(allowedUID: UInt32, cliExecutable: URL, procRoot: String = "/proc") {
        self.allowedUID = allowedUID
        self.cliExecutable = cliExecutable
        self.procRoot = procRoot
    }

    /// The client of `channel`, resolving it on the connection's first request. Clients of
    /// another uid are refused; a traced process or one started with a loader variable is
    /// marked (``Client/borrowed``).
    /// `onClose` runs once when the connection closes.
    ///
    /// The process is the one that connected, pinned by the connection (``PinnedPeer``): every
    /// byte of every request on it comes from that process while it runs
    /// (``CredentialedSocketChannel``), so this identity holds for each request, not only the first.
    func client(of channel: any Channel, onClose: @escaping @Sendable (ConnectionID) -> Void) async throws -> Client {
        let id = ConnectionID(channel)
        if let known = clients.withLock({ $0[id] }) { return known }
        guard let connection = channel as? CredentialedSocketChannel else {
            throw APIError(.peerRejected, "cannot read the peer credentials of this connection")
        }
        let credentials = connection.peer.credentials
        // Checked before anything else is read about the peer, and never cached.
        guard credentials.uid == allowedUID else {
            throw APIError(.peerRejected, "this daemon serves uid \(allowedUID) only; the client runs as uid \(credentials.uid)")
        }
        let borrowed = BorrowedProcess(procRoot: procRoot).reason(credentials.pid)
        let (executable, hash, pathNamesIt) = try executableIdentity(pid: credentials.pid)
        // Compared by content, so a copy elsewhere is the CLI too and a replaced file is not; once
        // per connection, as the peer's executable is, not with a stat of the CLI's path for every
        // request (BENCHMARKS.md, "Measured design choices").
        let cliHash = try? FileHashes.shared.sha256(of: cliExecutable)
        let isCLI = cliHash.map { ConstantTime.equals($0, hash) } ?? false
        // The CLI does not change its session, and nothing traced is served as the CLI: its
        // terminal, read once, holds for the connection.
        let terminal = isCLI ? ControllingTerminal.of(pid: credentials.pid, procRoot: procRoot) : nil
        // What was read under /proc/<pid> is the pinned process's only if it still runs now.
        guard connection.peer.isAlive else {
            throw APIError(.peerRejected, "the connected process \(credentials.pid) has exited")
        }
        let client = Client(
            connection: id, credentials: credentials, executable: executable, executableSHA256: hash, executablePathNamesIt: pathNamesIt,
            isCLI: isCLI, borrowed: borrowed, terminal: terminal)
        clients.withLock { $0[id] = client }
        channel.closeFuture.whenComplete { [weak self] _ in
            self?.clients.withLock { $0[id] = nil }
            onClose(id)
        }
        return client
    }

    /// The client of `channel` if one of its requests identified it already.
    func knownClient(of channel: any Channel) -> Client? {
        clients.withLock { $0[ConnectionID(channel)] }
    }

    private func executableIdentity(pid: Int32) throws -> (path: String, sha256: Data, pathNamesIt: Bool) {
        let link = "\(procRoot)/\(pid)/exe"
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) ?? "unknown"
        // Open the link itself: the kernel hands over the file it mapped, even if the path
        // has since been replaced by another binary.
        let fd = open(link, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw APIError(.missingEntitlement, "cannot open the executable of process \(pid) (errno \(errno))")
        }
        defer { close(fd) }
        return (path, try FileHashes.shared.sha256(ofOpenFile: fd), ProcessImage.path(path, isFileOpenAt: fd))
    }
}
