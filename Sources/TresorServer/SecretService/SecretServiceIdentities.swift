import Foundation
import TresorKeychain
import TresorSecretService

/// Who a Secret Service client is, by the rules the socket API uses for its clients: the
/// executable the kernel mapped for the process (`/proc/<pid>/exe`, hashed through the open
/// link, never by re-opening its path), a registered application's groups when its hash is
/// registered, and otherwise a group of the executable's own plus what the user granted it
/// (docs/SECRET-SERVICE.md).
struct SecretServiceIdentities: Sendable {
    let keychains: KeychainProvider
    /// The uid the daemon serves. For root every file is writable by the user, so no
    /// executable is identified by its path.
    let uid: uid_t
    let procRoot: String

    init(keychains: KeychainProvider, uid: uid_t = getuid(), procRoot: String = "/proc") {
        self.keychains = keychains
        self.uid = uid
        self.procRoot = procRoot
    }

    func identify(pid: Int32) throws -> SecretServiceClient {
        try refuseBorrowedProcess(pid)
        let link = "\(procRoot)/\(pid)/exe"
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: link)) ?? "unknown"
        let fd = open(link, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw KeychainError.missingEntitlement("cannot open the executable of process \(pid) (errno \(errno))") }
        defer { close(fd) }
        let hash = try FileHashes.shared.sha256(ofOpenFile: fd)
        let login = try keychains.loginKeychain()
        let registry: Application?
        do {
            registry = try login.applications.application(executableSHA256: hash)
        } catch KeychainError.interactionNotAllowed {
            // Before the first unlock nobody's items can be read anyway; the client is asked
            // again once the registry opens.
            let own = Self.group(path: path, sha256: hash, uid: uid)
            return SecretServiceClient(caller: Caller(accessGroups: [own], defaultAccessGroup: own), executable: path, isProvisional: true)
        }
        if let application = registry {
            return SecretServiceClient(
                caller: Caller(accessGroups: application.allowedGroups, defaultAccessGroup: application.applicationID),
                executable: "\(path) (\(application.applicationID))")
        }
        let own = Self.group(path: path, sha256: hash, uid: uid)
        let grants = try keychains.executableGrants()
        return SecretServiceClient(
            caller: Caller(accessGroups: [own] + (try grants.groups(grantedTo: own)), defaultAccessGroup: own), executable: path,
            grantedItems: try grants.items(grantedTo: own))
    }

    /// The loader variables that put another program's code into a process: a process started
    /// with one of them is not the executable it names (docs/SECRET-SERVICE.md).
    static let loaderVariables = ["LD_PRELOAD", "LD_AUDIT"]

    /// Refuses a process that another program controls: one being traced (`TracerPid`, kept by
    /// the kernel), or one started with a loader variable (its initial environment). Neither
    /// proves the process is clean — code can be injected in other ways by a process of the same
    /// user — but both are the ordinary ways of borrowing a program's identity.
    func refuseBorrowedProcess(_ pid: Int32) throws {
        let status = (try? String(contentsOfFile: "\(procRoot)/\(pid)/status", encoding: .utf8)) ?? ""
        if let line = status.split(separator: "\n").first(where: { $0.hasPrefix("TracerPid:") }),
            line.dropFirst("TracerPid:".count).trimmingCharacters(in: .whitespaces) != "0" {
            throw KeychainError.missingEntitlement("the calling process is being traced")
        }
        let environment = (try? Data(contentsOf: URL(fileURLWithPath: "\(procRoot)/\(pid)/environ"))) ?? Data()
        for entry in environment.split(separator: 0) {
            let name = String(decoding: entry.prefix(while: { $0 != UInt8(ascii: "=") }), as: UTF8.self)
            if Self.loaderVariables.contains(name) {
                throw KeychainError.missingEntitlement("the calling process was started with \(name)")
            }
        }
    }

    /// The own group of an unregistered executable: by path when the user cannot write it,
    /// by hash otherwise (``ExecutableGroup``).
    static func group(path: String, sha256: Data, uid: uid_t) -> String {
        uid != 0 && isSystemOwned(path) ? ExecutableGroup.byPath(path) : ExecutableGroup.byHash(Array(sha256))
    }

    /// Whether `path` and every folder above it are root's and writable by root alone, so no
    /// other user can put another program there.
    static func isSystemOwned(_ path: String) -> Bool {
        guard path.hasPrefix("/") else { return false }
        var current = URL(fileURLWithPath: path)
        while true {
            var info = stat()
            guard lstat(current.path, &info) == 0, info.st_uid == 0, info.st_mode & 0o022 == 0 else { return false }
            // The executable itself must be the file, not a link someone could repoint.
            if current.path == path && (info.st_mode & S_IFMT) != S_IFREG { return false }
            if current.path == "/" { return true }
            current.deleteLastPathComponent()
        }
    }
}
