import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An unprivileged user of the machine that tests run Tresor as — its daemon, its bus, its
/// clients and the attacker — where running as root would change the answer (a daemon running as
/// root trusts no executable by its path). Made once per machine with `useradd`; tests that need it
/// run as root (CI does) and are disabled otherwise.
struct TestUser: Sendable {
    let name: String
    let uid: uid_t
    let gid: gid_t

    static let setpriv = URL(fileURLWithPath: "/usr/bin/setpriv")

    /// Whether the tests can run processes as another user here.
    static var available: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: setpriv.path)
            && FileManager.default.isExecutableFile(atPath: "/usr/sbin/useradd")
    }

    /// `tresor-e2e`, made on first use if the machine has no such user.
    static let shared: Result<TestUser, any Error> = Result {
        let name = "tresor-e2e"
        if getpwnam(name) == nil {
            let made = try Harness.execute(
                URL(fileURLWithPath: "/usr/sbin/useradd"), ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                environment: ProcessInfo.processInfo.environment, timeout: 30).result
            guard made.succeeded || getpwnam(name) != nil else { throw TestUserError.cannotCreate(made.stderr) }
        }
        guard let entry = getpwnam(name) else { throw TestUserError.cannotCreate("no passwd entry for \(name)") }
        return TestUser(name: name, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    /// `executable arguments` run as this user, with no supplementary groups and no capabilities.
    func wrapping(_ executable: URL, _ arguments: [String]) -> (URL, [String]) {
        (Self.setpriv, ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", executable.path] + arguments)
    }

    /// Gives `url` and everything below it to this user.
    func own(_ url: URL) throws {
        let changed = try Harness.execute(
            URL(fileURLWithPath: "/bin/chown"), ["-R", "\(uid):\(gid)", url.path], environment: ProcessInfo.processInfo.environment, timeout: 30).result
        guard changed.succeeded else { throw TestUserError.cannotCreate("chown failed: \(changed.stderr)") }
    }

    /// The test's binaries where this user can run them: hard links (copies across file systems)
    /// in a folder of their own, made once per test process, since the build folder's parents need
    /// not be open to other users. Never given to the user: a link is the build's own file.
    static let binaries: Result<URL, any Error> = Result {
        let folder = URL(fileURLWithPath: "/var/tmp/tresor-e2e-bin-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: "/var/tmp/tresor-e2e-bin-\(getpid())") }
        for name in ["tresor", "tresord"] {
            let source = Harness.binaries.appendingPathComponent(name), target = folder.appendingPathComponent(name)
            if (try? FileManager.default.linkItem(at: source, to: target)) == nil {
                try FileManager.default.copyItem(at: source, to: target)
            }
        }
        chmod(folder.path, 0o755)
        return folder
    }
}

enum TestUserError: Error {
    case cannotCreate(String)
}
