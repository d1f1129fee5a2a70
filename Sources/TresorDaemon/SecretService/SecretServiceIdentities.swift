import Foundation
import TresorKeychain
import TresorSecretService
import TresorSystem

/// Who a Secret Service client is, by the rules the socket API uses for its clients: the
/// executable the kernel mapped for the process (`/proc/<pid>/exe`, hashed through the open
/// link, never by re-opening its path), a registered application's groups when its hash is
/// registered and the application was registered for the Secret Service too, and otherwise a
/// group of the executable's own plus what the user granted it (docs/SECRET-SERVICE.md).
struct SecretServiceIdentities: Sendable {
    let keychains: KeychainProvider
    /// The uid the daemon serves. For root every file is writable by the user, so no
    /// executable is identified by its path.
    let uid: uid_t
    let procRoot: String
    /// Interpreters and secret-dispensing clients: served with the user's approval or trust only.
    let genericClients: GenericClients

    init(keychains: KeychainProvider, uid: uid_t = getuid(), procRoot: String = "/proc", genericClients: GenericClients = GenericClients()) {
        self.keychains = keychains
        self.uid = uid
        self.procRoot = procRoot
        self.genericClients = genericClients
    }

    func identify(pid: Int32) throws -> SecretServiceClient {
        try refuseBorrowedProcess(pid)
        let link = "\(procRoot)/\(pid)/exe"
        let path = executablePath(of: pid) ?? "unknown"
        let fd = open(link, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw KeychainError.missingEntitlement("cannot open the executable of process \(pid) (errno \(errno))") }
        defer { close(fd) }
        let hash = try FileHashes.shared.sha256(ofOpenFile: fd)
        // The path names this file only if it is the file at that path here, and the process sees
        // paths as the daemon does: a private mount namespace can put any program at a system path.
        let pathNamesTheFile = ProcessImage.path(path, isFileOpenAt: fd) && ProcessNamespaces.sharesUserAndMount(with: pid, procRoot: procRoot)
        let login = try keychains.loginKeychain()
        let registry: Application?
        do {
            // A development build is known by its path, which D-Bus cannot vouch for: never here.
            registry = try login.applications.application(executableSHA256: hash).flatMap { $0.isDevelopmentBuild ? nil : $0 }
        } catch KeychainError.interactionNotAllowed {
            // Before the first unlock nobody's items can be read anyway; the client is asked
            // again once the registry opens.
            let own = Self.group(path: path, sha256: hash, uid: uid, pathNamesTheFile: pathNamesTheFile)
            return SecretServiceClient(
                caller: Caller(accessGroups: [own], defaultAccessGroup: own), executable: path, isProvisional: true,
                isGenericClient: genericClients.contains(path: path, sha256: hash), readParentChain: chainReader(of: pid))
        }
        // A registered application's items are served on the bus only when it was registered for
        // it: any process of the user can borrow a bus identity (docs/SECURITY.md, "Borrowed bus
        // connections"), which the socket API's per-message credentials rule out.
        let own = Self.group(path: path, sha256: hash, uid: uid, pathNamesTheFile: pathNamesTheFile)
        let generic = genericClients.contains(path: path, sha256: hash)
        if let application = registry, application.usesSecretService {
            // A generic client registered for the bus (registration refuses one now; a name added
            // to the table later makes one) still reads only with the user's approval or trust.
            return SecretServiceClient(
                caller: Caller(accessGroups: application.allowedGroups, defaultAccessGroup: application.applicationID),
                executable: "\(path) (\(application.applicationID))", isGenericClient: generic, ownGroup: generic ? own : nil,
                readParentChain: generic ? chainReader(of: pid) : nil)
        }
        let grants = try keychains.executableGrants()
        // Read when the user's trust or an approval needs it: a program granted ahead of time never does.
        let readChain: (@Sendable () -> [String])? = generic ? chainReader(of: pid) : nil
        return SecretServiceClient(
            caller: Caller(accessGroups: [own] + (try grants.groups(grantedTo: own)), defaultAccessGroup: own), executable: path,
            grantedItems: try grants.items(grantedTo: own), isGenericClient: generic, readParentChain: readChain)
    }

    /// The own group of each ancestor of `pid` up to its session's leader, the parent first, then
    /// the login session itself (its leader's pid and start time): what an approval "for this
    /// session" remembers, so it ends with the session. An ancestor whose executable cannot be read
    /// (another user's) is ``unreadableAncestor``.
    func parentChain(of pid: Int32) -> [String] {
        let session = ProcessAncestors.session(of: pid, procRoot: procRoot).map { "session:\($0.leader)@\($0.startTime)" } ?? "session:unknown"
        return ancestorGroups(of: pid) + [session]
    }

    /// Reads ``parentChain(of:)`` when called.
    private func chainReader(of pid: Int32) -> @Sendable () -> [String] {
        { [self] in parentChain(of: pid) }
    }

    private func ancestorGroups(of pid: Int32) -> [String] {
        ProcessAncestors.of(pid, procRoot: procRoot).map { ancestor in
            let link = "\(procRoot)/\(ancestor)/exe"
            let fd = open(link, O_RDONLY | O_CLOEXEC)
            guard fd >= 0, let path = executablePath(of: ancestor) else {
                if fd >= 0 { close(fd) }
                return Self.unreadableAncestor
            }
            defer { close(fd) }
            guard let hash = try? FileHashes.shared.sha256(ofOpenFile: fd) else { return Self.unreadableAncestor }
            let pathNamesTheFile =
                ProcessImage.path(path, isFileOpenAt: fd)
                && ProcessNamespaces.sharesUserAndMount(with: ancestor, procRoot: procRoot)
            return Self.group(path: path, sha256: hash, uid: uid, pathNamesTheFile: pathNamesTheFile)
        }
    }

    /// The path `/proc/<pid>/exe` reads (in that process's view of the file system), or nil when
    /// it cannot be read: one `readlink`, for every new client and each of a generic client's ancestors.
    private func executablePath(of pid: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("\(procRoot)/\(pid)/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// An ancestor the daemon cannot read the executable of (one of another user).
    static let unreadableAncestor = "unreadable"

    /// Refuses a traced process, or one started with a loader variable (``BorrowedProcess``).
    func refuseBorrowedProcess(_ pid: Int32) throws {
        try BorrowedProcess(procRoot: procRoot).refuse(pid)
    }

    /// The own group of an unregistered executable: by path when the user cannot write it and
    /// the path names the very file the process runs, by hash otherwise (``ExecutableGroup``).
    /// - Parameters:
    ///   - path: the executable's path.
    ///   - sha256: the hash of the file the process runs.
    ///   - uid: the uid the daemon serves (for root, nothing is known by path).
    ///   - pathNamesTheFile: whether `path`, here, is the file the process runs.
    static func group(path: String, sha256: Data, uid: uid_t, pathNamesTheFile: Bool = true) -> String {
        uid != 0 && pathNamesTheFile && SystemFiles.isSystemOwned(path) ? ExecutableGroup.byPath(path) : ExecutableGroup.byHash(Array(sha256))
    }
}
