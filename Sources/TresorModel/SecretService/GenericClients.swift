import FoundationEssentials
import Synchronization

/// Programs any process of the user can run with arguments of its choosing to get a secret:
/// interpreters (every script shares its interpreter's items) and the clients that hand out
/// secrets on request (`secret-tool lookup`, git's credential helpers). For them an identity of
/// their own proves nothing about who asks. So the Secret Service reads their secrets only with the
/// user's approval, or while the user trusts them (docs/SECURITY.md, "Generic clients"), and a
/// backup never gives one another application's groups (docs/SECURITY.md, "Restoring a handed
/// backup"). One table for both, here, in the lowest module the Secret Service and the backups share.
///
/// A program is one by the name of its executable file — a name of the table, alone or followed by
/// a version (`python3.11`, `perl5.36.0`, `node18`, `tclsh8.6`) — or by being the same file (its
/// SHA-256) as a program of the table installed in the system's folders, whatever a copy of it is called.
public struct GenericClients: Sendable {
    /// Interpreters and shells, without a version suffix (`python3.11` is `python`).
    public static let interpreters: [String] = [
        "python", "pypy", "perl", "ruby", "irb", "node", "nodejs", "deno", "bun", "php", "lua", "luajit", "tclsh", "wish", "expect",
        "gjs", "cjs", "guile", "racket", "sbcl", "clisp", "ocaml", "ghci", "runghc", "julia", "R", "Rscript", "java", "jshell",
        "osascript", "sh", "bash", "dash", "zsh", "ksh", "mksh", "pdksh", "yash", "fish", "tcsh", "csh", "busybox", "pwsh", "elvish",
        "nu", "xonsh", "awk", "gawk", "mawk", "nawk",
    ]

    /// The clients that hand out a secret to whoever runs them.
    public static let secretDispensers: [String] = ["secret-tool", "git", "git-credential-libsecret", "git-credential-gnome-keyring"]

    /// The table: interpreters and shells, then the clients that hand out secrets.
    public static let builtIn: [String] = interpreters + secretDispensers

    /// Where the table's programs are looked for, to know them by their contents too.
    public static let systemFolders = ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin"]

    /// The names of the table and those the user added.
    public let names: Set<String>
    private let installed: @Sendable () -> Set<Data>

    /// - Parameters:
    ///   - extra: names the user added (the daemon's configuration, `"secretServiceGenericClients"`):
    ///     the table only grows.
    ///   - hash: the SHA-256 of a file, for the installed copies of the table's programs; nil
    ///     knows them by name only.
    public init(extra: [String] = [], hash: (@Sendable (URL) throws -> Data)? = nil) {
        let names = Set(Self.builtIn + extra.filter { !$0.isEmpty && !$0.contains("/") })
        self.names = names
        guard let hash else {
            installed = { [] }
            return
        }
        let known = InstalledHashes(names: names, hash: hash)
        installed = { known.value }
    }

    /// Hashes the installed copies of the table's programs now (tens of milliseconds, more with
    /// large interpreters), so that the first client is not kept waiting for it.
    public func prepare() { _ = installed() }

    /// Whether the executable at `path`, whose file has SHA-256 `sha256`, is a generic client.
    /// - Parameters:
    ///   - path: the executable's path: what the process's `/proc/<pid>/exe` reads, or what an
    ///     application record says.
    ///   - sha256: the hash of the file it runs.
    public func contains(path: String, sha256: Data) -> Bool {
        Self.matches(URL(fileURLWithPath: path).lastPathComponent, names) || installed().contains(sha256)
    }

    /// Whether `name` is one of `names`, alone or followed by a version (digits, dots and dashes).
    static func matches(_ name: String, _ names: Set<String>) -> Bool {
        if names.contains(name) { return true }
        let base = name.reversed().drop { $0.isNumber || $0 == "." || $0 == "-" }
        return base.count < name.count && names.contains(String(base.reversed()))
    }
}

/// The hashes of the table's programs installed in the system's folders, read once, when first
/// needed: hashing a few interpreters takes tens of milliseconds.
private final class InstalledHashes: Sendable {
    private let names: Set<String>
    private let hash: @Sendable (URL) throws -> Data
    private let cached = Mutex<Set<Data>?>(nil)

    init(names: Set<String>, hash: @escaping @Sendable (URL) throws -> Data) {
        self.names = names
        self.hash = hash
    }

    var value: Set<Data> {
        cached.withLock { cached in
            if let cached { return cached }
            var files: Set<String> = []
            for folder in GenericClients.systemFolders {
                let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
                for name in entries where GenericClients.matches(name, names) {
                    files.insert(URL(fileURLWithPath: folder).appendingPathComponent(name).resolvingSymlinksInPath().path)
                }
            }
            // Each file once: /bin is often /usr/bin, and python3 a link to python3.11.
            let found = Set(files.compactMap { try? hash(URL(fileURLWithPath: $0)) })
            cached = found
            return found
        }
    }
}
