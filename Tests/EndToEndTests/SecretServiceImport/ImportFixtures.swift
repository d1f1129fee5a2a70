import Foundation

// The import tests' world: a session bus of their own (PrivateBus), the real gnome-keyring on it
// as the provider to import from (GnomeKeyring), and Debian's secret-tool as its user's client.

enum ImportTools {
    static let dbusDaemon = "/usr/bin/dbus-daemon"
    static let dbusSend = "/usr/bin/dbus-send"
    static let gnomeKeyring = "/usr/bin/gnome-keyring-daemon"
    static let secretTool = "/usr/bin/secret-tool"
    static let busName = "org.freedesktop.secrets"

    /// Without them the tests are disabled, not silently passed.
    static let installed = [dbusDaemon, dbusSend, gnomeKeyring, secretTool].allSatisfy { FileManager.default.fileExists(atPath: $0) }

    /// Runs a tool to its end, at most `timeout` seconds (then it is killed), recording nothing:
    /// for commands that print a secret on purpose (a lookup), which must stay out of the
    /// harness's transcript, whose scan looks for secrets.
    static func run(
        _ executable: String, _ arguments: [String], input: String? = nil, environment: [String: String], timeout: TimeInterval = 30
    ) throws -> Harness.Result {
        try Harness.execute(URL(fileURLWithPath: executable), arguments, input: input, environment: environment, timeout: timeout).result
    }
}

/// `secret-tool` as a user runs it, against whichever provider owns the name on the bus of
/// `environment`. Nothing it prints is recorded (a lookup prints the secret).
struct SecretToolClient {
    let environment: [String: String]

    /// `secret-tool store --label=LABEL ATTRIBUTE VALUE…`, the secret on standard input.
    func store(label: String, _ attributes: [(String, String)], secret: String, collection: String? = nil) throws {
        let stored = try ImportTools.run(
            ImportTools.secretTool,
            ["store", "--label=\(label)"] + (collection.map { ["--collection=\($0)"] } ?? []) + attributes.flatMap { [$0.0, $0.1] },
            input: secret, environment: environment)
        guard stored.succeeded else { throw ImportFixtureError("secret-tool store failed: \(stored.stderr)") }
    }

    /// `secret-tool lookup ATTRIBUTE VALUE…`: the secret, or nil when none matches.
    func lookup(_ attributes: [(String, String)]) throws -> String? {
        let found = try ImportTools.run(ImportTools.secretTool, ["lookup"] + attributes.flatMap { [$0.0, $0.1] }, environment: environment)
        return found.succeeded ? found.stdout : nil
    }

    /// How many items `secret-tool search --all ATTRIBUTE VALUE…` lists.
    func count(_ attributes: [(String, String)]) throws -> Int {
        let found = try ImportTools.run(ImportTools.secretTool, ["search", "--all"] + attributes.flatMap { [$0.0, $0.1] }, environment: environment)
        return (found.stdout + found.stderr).components(separatedBy: "\nlabel = ").count - 1
    }
}

struct ImportFixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
