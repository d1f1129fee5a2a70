import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Where a Tresor home keeps its files, and where its daemon listens.
///
/// The home is `--home`, else `$TRESOR_HOME`, else `$XDG_DATA_HOME/tresor`, else
/// `~/.local/share/tresor` (docs/FORMAT.md, "Home files"). The socket is
/// `$XDG_RUNTIME_DIR/tresor/tresord.sock` for the default home; any other home gets its own socket
/// name in the same folder, so two homes never talk to each other's daemon. Without
/// `XDG_RUNTIME_DIR` the socket lives in `<home>/run/`. The device key lives outside the home, in
/// `$XDG_STATE_HOME/tresor` (else `~/.local/state/tresor`), so a copy or sync of the home does not
/// carry it.
public struct TresorPaths: Sendable, Equatable {
    public let home: URL
    public let isDefaultHome: Bool
    public let runtimeDirectory: URL
    /// Machine-bound state kept apart from the home: the device key.
    public let stateDirectory: URL

    public init(home explicitHome: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) {
        let defaultHome = Self.defaultHome(environment: environment)
        let chosen: URL
        if let explicitHome, !explicitHome.isEmpty {
            chosen = URL(fileURLWithPath: explicitHome)
        } else if let fromEnvironment = environment["TRESOR_HOME"], !fromEnvironment.isEmpty {
            chosen = URL(fileURLWithPath: fromEnvironment)
        } else {
            chosen = defaultHome
        }
        home = chosen.standardizedFileURL
        isDefaultHome = home.path == defaultHome.standardizedFileURL.path
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            runtimeDirectory = URL(fileURLWithPath: runtime).appendingPathComponent("tresor")
        } else {
            runtimeDirectory = home.appendingPathComponent("run")
        }
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty {
            stateDirectory = URL(fileURLWithPath: state).appendingPathComponent("tresor")
        } else {
            stateDirectory = Self.userHome(environment: environment).appendingPathComponent(".local/state/tresor")
        }
    }

    private static func userHome(environment: [String: String]) -> URL {
        URL(fileURLWithPath: environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path)
    }

    /// Why a home given with `--home` is none: empty — a script's unset variable, which would
    /// name `$TRESOR_HOME` or the default home instead — or a file. Whether it exists is the
    /// caller's to ask (a home is made by `tresor init`).
    /// - Parameter given: the `--home` given, if any.
    /// - Returns: the refusal in words, or nil when the home may be used.
    public static func refusal(ofGivenHome given: String?) -> String? {
        guard let given else { return nil }
        guard !given.isEmpty else { return "--home is empty: name the home's folder, or leave --home out for $TRESOR_HOME or the default home" }
        let home = TresorPaths(home: given).home
        guard SecureFiles.exists(home), !SecureFiles.isDirectory(home) else { return nil }
        return "\(home.path) is a file, not a Tresor home (a folder)"
    }

    static func defaultHome(environment: [String: String]) -> URL {
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            return URL(fileURLWithPath: data).appendingPathComponent("tresor")
        }
        return userHome(environment: environment).appendingPathComponent(".local/share/tresor")
    }

    /// The daemon's Unix socket for this home.
    public var socket: URL {
        guard !isDefaultHome else { return runtimeDirectory.appendingPathComponent("tresord.sock") }
        return runtimeDirectory.appendingPathComponent("tresord-\(homeName).sock")
    }

    /// A stable short name for a home that is not the default one: FNV-1a of its path (not a
    /// security measure: the folders holding what it names are 0700).
    private var homeName: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in home.path.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }

    /// The 32-byte device key: Tresor's stand-in for a device's hardware key. Outside the home
    /// (`<state>/device.key`, or `device-<name>.key` for another home), so a copy of the home
    /// is not enough to open it; never exported, never in a backup. Moving a home to another
    /// path means moving its device key along (docs/SECURITY.md §4.5).
    public var deviceKey: URL {
        stateDirectory.appendingPathComponent(isDefaultHome ? "device.key" : "device-\(homeName).key")
    }
    /// Where homes made before the device key moved out kept it; moved out at the next open.
    public var legacyDeviceKey: URL { home.appendingPathComponent("device.key") }
    /// The keybag: wrapped class keys and passcode parameters.
    public var keybag: URL { home.appendingPathComponent("keybag") }
    /// The persistent failed-passcode counter.
    public var unlockAttempts: URL { home.appendingPathComponent("unlock-attempts") }
    /// The class keys wrapped under the login password (`tresor passcode link-login`), when linked.
    public var loginLink: URL { home.appendingPathComponent("login-link") }
    /// The login keychain's database.
    public var loginKeychain: URL { home.appendingPathComponent("login.keychain.db") }
    /// Which executables the user let use other executables' Secret Service items (sealed).
    public var executableGrants: URL { home.appendingPathComponent("executable-grants") }
    /// The names Secret Service clients gave the collections (`Label`), when one was renamed.
    public var secretServiceCollections: URL { home.appendingPathComponent("secret-service-collections.json") }
    /// Keychains the user created, each a database and a keybag of its own.
    public var keychainsFolder: URL { home.appendingPathComponent("keychains") }
    /// The notes database (accounts, folders, notes, attachment records).
    public var notesDatabase: URL { home.appendingPathComponent("notes.db") }
    /// Sealed attachment files, one per attachment, named by a random id.
    public var attachmentsFolder: URL { home.appendingPathComponent("attachments") }
    /// Daemon settings (`config.json`), optional.
    public var config: URL { home.appendingPathComponent("config.json") }
    /// The lock that keeps a second daemon off this home.
    public var daemonLock: URL { home.appendingPathComponent("tresord.lock") }
    /// Where a daemon started by the CLI, or given nowhere to write, writes its log.
    public var daemonLog: URL { home.appendingPathComponent("logs/tresord.log") }

    /// The home the PAM module opens at login (docs/SECURITY.md, "Unlock at login"): its helper runs
    /// with `HOME` from the user's passwd entry and no variable that moves the home
    /// (`TRESOR_HOME`, `XDG_DATA_HOME`), so only the default home under the home folder is unlocked.
    /// - Parameter homeFolder: the user's home folder; nil for the passwd entry's of this process's user.
    /// - Returns: that home's folder; nil when the user has no passwd entry.
    public static func openedAtLogin(homeFolder: String? = nil) -> URL? {
        guard let folder = homeFolder ?? passwdHomeFolder() else { return nil }
        return defaultHome(environment: ["HOME": folder]).standardizedFileURL
    }

    private static func passwdHomeFolder() -> String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16_384)
        guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &found) == 0, found != nil, let directory = entry.pw_dir else { return nil }
        return String(cString: directory)
    }

    /// Opens ``daemonLog`` for appending, private to the user, making the home and its logs
    /// folder first.
    /// - Returns: the descriptor (close-on-exec), or -1 with `errno` set.
    /// - Throws: a folder that cannot be made (`SecureFiles.createDirectory(_:)`).
    public func openDaemonLog() throws -> Int32 {
        try SecureFiles.createDirectory(home)
        try SecureFiles.createDirectory(daemonLog.deletingLastPathComponent())
        return open(daemonLog.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
    }
}
