import Foundation
import NIOCore
import Synchronization
import TresorCrypto
import TresorKeychain
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
            executableSHA256: executableSHA256.map { String(format: "%02x", $0) }.joined())
    }
}

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
        // per connection, as the peer's executable is (a stat of the CLI's path for every request
        // was 4 % of a keychain lookup).
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

    var connectionCount: Int { clients.withLock { $0.count } }

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

/// SHA-256 of files by path, cached by device, inode, size, modification and change time.
final class FileHashes: Sendable {
    static let shared = FileHashes()

    /// ctime is in the key too: unlike mtime, no unprivileged process can set it back, so a
    /// binary edited in place is always hashed again.
    struct Identity: Hashable {
        var device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int, changeSeconds: Int, changeNanoseconds: Int

        init(_ info: stat) {
            (device, inode, size) = (UInt64(info.st_dev), UInt64(info.st_ino), Int64(info.st_size))
            (seconds, nanoseconds) = (info.st_mtim.tv_sec, info.st_mtim.tv_nsec)
            (changeSeconds, changeNanoseconds) = (info.st_ctim.tv_sec, info.st_ctim.tv_nsec)
        }
    }

    private let cache = Mutex<[Identity: Data]>([:])

    /// The hash of the file open at `fd`.
    func sha256(ofOpenFile fd: Int32) throws -> Data {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw KeychainError.param("cannot stat the executable (errno \(errno))") }
        let identity = Identity(info)
        if let known = cache.withLock({ $0[identity] }) { return known }
        let hash = try Digest.sha256(readingFileDescriptor: fd)
        cache.withLock { $0[identity] = hash }
        return hash
    }

    /// The hash of the file at `url`. A file hashed before costs one `stat` (every connection
    /// asks whether its client is the CLI).
    func sha256(of url: URL) throws -> Data {
        var info = stat()
        if stat(url.path, &info) == 0, let known = cache.withLock({ $0[Identity(info)] }) { return known }
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw KeychainError.param("cannot open \(url.path) (errno \(errno))") }
        defer { close(fd) }
        return try sha256(ofOpenFile: fd)
    }
}
