import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An unprivileged user of the machine that tests run Tresor as — its daemon, its bus, its
/// clients and the attacker — where running as root would change the answer (a daemon running as
/// root trusts no executable by its path). Made once per machine with `useradd`; tests that need it
/// run as root (CI does) and are disabled otherwise.
public struct TestUser: Sendable {
    public let name: String
    public let uid: uid_t
    public let gid: gid_t

    public static let setpriv = URL(fileURLWithPath: "/usr/bin/setpriv")

    /// Whether the tests can run processes as another user here.
    public static var available: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: setpriv.path)
            && FileManager.default.isExecutableFile(atPath: "/usr/sbin/useradd")
    }

    /// `tresor-e2e`, made on first use if the machine has no such user.
    public static let shared: Result<TestUser, any Error> = Result {
        let name = "tresor-e2e"
        if getpwnam(name) == nil {
            let made = try TestProcess.run(
                URL(fileURLWithPath: "/usr/sbin/useradd"), ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], timeout: 30
            ).result
            guard made.succeeded || getpwnam(name) != nil else { throw TestUserError.cannotCreate(made.stderr) }
        }
        guard let entry = getpwnam(name) else { throw TestUserError.cannotCreate("no passwd entry for \(name)") }
        return TestUser(name: name, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    /// `executable arguments` run as this user, with no supplementary groups and no capabilities.
    public func wrapping(_ executable: URL, _ arguments: [String]) -> (URL, [String]) {
        (Self.setpriv, ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", executable.path] + arguments)
    }

    /// Gives `url` and everything below it to this user.
    public func own(_ url: URL) throws {
        let changed = try TestProcess.run(URL(fileURLWithPath: "/bin/chown"), ["-R", "\(uid):\(gid)", url.path], timeout: 30).result
        guard changed.succeeded else { throw TestUserError.cannotCreate("chown failed: \(changed.stderr)") }
    }
}

public enum TestUserError: Error {
    case cannotCreate(String)
}
