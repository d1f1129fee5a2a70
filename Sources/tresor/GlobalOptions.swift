import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorSystem

/// Options every command takes, before or after the command's name (`tresor --json status`
/// is `tresor status --json`: ``CommandLineWords/arranged(_:)``).
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "The data folder (default: $TRESOR_HOME, else $XDG_DATA_HOME/tresor, else ~/.local/share/tresor).")
    var home: String?

    @Flag(name: .long, help: "Print machine-readable JSON instead of text (docs/CLI-JSON.md).")
    var json = false

    @Flag(name: .long, help: "Say more when something fails: the error's code, its OSStatus and the daemon's own words.")
    var verbose = false

    var paths: TresorPaths { TresorPaths(home: home) }

    func validate() throws { try Self.requireHome(home, made: false) }

    /// A connection to the home's daemon, started if needed.
    /// - Parameter makingHome: whether the command makes the home (`tresor init`); any other
    ///   refuses a `--home` that does not exist (``requireHome(_:made:)``).
    /// - Throws: `ValidationError` for such a home; what connecting throws.
    func connect(makingHome: Bool = false) throws -> TresorClient {
        try Self.requireHome(home, made: !makingHome)
        return try TresorClient.connect(paths: paths)
    }

    /// Refuses a `--home` that is empty or a file (``TresorPaths/refusal(ofGivenHome:)``) and,
    /// unless the command makes it, one that does not exist: a mistyped path would otherwise
    /// become a new, empty home, with a daemon of its own left running. `$TRESOR_HOME` and the
    /// default home are made on first use.
    /// - Parameters:
    ///   - home: the `--home` given, if any.
    ///   - made: whether the home must exist already.
    /// - Throws: `ValidationError` saying what is wrong, and how to make a home there.
    static func requireHome(_ home: String?, made: Bool = true) throws {
        if let refusal = TresorPaths.refusal(ofGivenHome: home) { throw ValidationError(refusal) }
        guard let home, made else { return }
        let url = TresorPaths(home: home).home
        guard !SecureFiles.exists(url) else { return }
        throw ValidationError("no Tresor home at \(url.path): check the path, or make one there with `tresor --home \(url.path) init`")
    }

    /// The keychain `name` (nil: the login keychain) of the home's daemon, started if needed.
    func keychain(named name: String?) throws -> Keychain { try Self.keychain(home: home, named: name) }

    /// ``keychain(named:)`` for a command line read without swift-argument-parser (``SecretLookup``).
    static func keychain(home: String?, named name: String?) throws -> Keychain {
        try requireHome(home)
        return Keychain(client: try TresorClient.connect(paths: TresorPaths(home: home)), named: name)
    }

    /// The notes of the home's daemon, started if needed.
    func notes() throws -> Notes { Notes(client: try connect()) }
}
