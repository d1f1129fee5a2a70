import FoundationEssentials

/// Programs that run code of anyone's choosing — Python, Perl, shells… A file name's identity
/// protects nothing for them: every script an interpreter runs is that interpreter to Tresor.
/// So they are treated apart: a backup never gives one another application's groups
/// (docs/SECURITY.md, "Restoring a handed backup").
public enum Interpreter {
    /// File names of interpreters, without a version suffix (`python3.11` is `python`).
    public static let names: Set<String> = [
        "python", "pypy", "perl", "ruby", "irb", "node", "nodejs", "deno", "bun", "php", "lua", "luajit", "tclsh", "wish", "expect",
        "guile", "racket", "sbcl", "clisp", "ocaml", "ghci", "runghc", "julia", "R", "Rscript", "java", "jshell", "osascript",
        "sh", "bash", "dash", "zsh", "ksh", "mksh", "pdksh", "yash", "fish", "tcsh", "csh", "busybox", "pwsh", "elvish", "nu", "xonsh",
        "awk", "gawk", "mawk", "nawk",
    ]

    /// Whether the file named `path` is an interpreter by its name (`/usr/bin/python3.11`,
    /// `perl5.36`, `pypy3`): the name less a trailing version of digits and dots.
    /// - Parameter path: an executable's path or file name.
    /// - Returns: whether its name is an interpreter's.
    public static func isInterpreter(path: String) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let stem = String(name.reversed().drop { $0.isNumber || $0 == "." || $0 == "-" }.reversed())
        return names.contains(name) || names.contains(stem)
    }

    /// Folders an installed interpreter is looked for in, to know its file by content.
    public static let folders = ["/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin"]
}
