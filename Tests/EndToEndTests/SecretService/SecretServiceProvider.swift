import Foundation
import Testing
import TresorTestSupport

// `tresord` as the freedesktop Secret Service provider on a private bus, and what the tests
// know of the interface (object paths, the `tresor secret-service` CLI).

enum SecretService {
    static let busName = "org.freedesktop.secrets"
    static let login = "/org/freedesktop/secrets/collection/login"
    static let session = "/org/freedesktop/secrets/collection/session"
    static let defaultAlias = "/org/freedesktop/secrets/aliases/default"
    /// How a refusal starts when the user's approval was needed and nobody could be asked: what
    /// secret-tool prints, and the `Prompt` call's error.
    static let nobodyToAsk = "your approval is needed, but no desktop prompter could be asked"
    /// What secret-tool prints when it waited for the keybag and nobody could be asked to unlock it.
    static let lockedWithNobodyToAsk = "Tresor is locked: no desktop prompter could be asked, and nobody ran `tresor unlock`"

    /// Everything the tests drive, installed by scripts/test. Without it they are disabled, not
    /// silently passed.
    static let toolsInstalled = [
        PrivateBus.dbusDaemon.path, PrivateBus.dbusSend.path, SecretTool.system.path, PythonClients.python.path,
        GnomeKeyring.executable.path, "/usr/bin/gcc", "/usr/bin/pkg-config", GitCredentialHelper.source.path,
    ].allSatisfy { FileManager.default.fileExists(atPath: $0) }
}

/// A private bus, a Tresor home on it, and `tresord --secret-service` owning
/// `org.freedesktop.secrets` there with an initialised, unlocked keybag.
final class TresorProvider {
    let bus: PrivateBus
    let harness: Harness
    let passcode: String
    private let daemonArguments: [String]
    /// Whether the generic clients the tests drive (secret-tool, python3, git's helper) are
    /// trusted ahead of time, as a user's own scripts would be: each daemon forgets its trust.
    private let trustsGenericClients: Bool
    private var trusted = false

    /// - Parameters:
    ///   - configuration: the home's config.json (`{"secretService": true}` turns the provider on
    ///     without the flag).
    ///   - daemonArguments: `tresord`'s arguments beyond the harness's own.
    ///   - base: where the harness makes its home (a small tmpfs for the full-disk test).
    ///   - user: another user to run the bus, the daemon and every client as.
    ///   - trustsGenericClients: trust secret-tool, python3 and git's helper (`tresor secret-service
    ///     trust add`) whenever the daemon is unlocked; false, their reads are put to the user.
    init(
        configuration: String? = nil, daemonArguments: [String] = ["--secret-service"], base: String? = nil, user: TestUser? = nil,
        trustsGenericClients: Bool = true
    ) throws {
        bus = try PrivateBus(user: user)
        harness = try Harness(base: base, configuration: configuration, environment: bus.environment, user: user)
        passcode = "e2e-ss-passcode-\(UUID().uuidString.prefix(8))"
        harness.secrets = [passcode]
        self.daemonArguments = daemonArguments
        self.trustsGenericClients = trustsGenericClients
        try start()
        let created = try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n")
        guard created.succeeded else { throw SecretServiceTestError.fixture("tresor init failed: \(created.stderr)") }
        try trustGenericClients()
    }

    deinit {
        // Before the bus goes: the daemon should see its bus close under it only when a test means it.
        harness.stopDaemon()
    }

    /// Starts `tresord` and waits until it owns `org.freedesktop.secrets`.
    func start() throws {
        trusted = false
        try harness.startDaemon(extraArguments: daemonArguments)
        try bus.waitFor(SecretService.busName, by: "tresord", running: { harness.daemonIsRunning }, log: { harness.daemonLog })
    }

    /// Stops the daemon, waits until the bus has released the name, starts it again and unlocks
    /// the keybag (a new daemon starts locked).
    func restart() throws {
        harness.stopDaemon()
        try bus.waitFor(SecretService.busName, owned: false, by: "tresord", log: { harness.daemonLog })
        try start()
        try unlock()
    }

    func lock() throws {
        let locked = try harness.tresor(["lock"])
        guard locked.succeeded else { throw SecretServiceTestError.fixture("tresor lock failed: \(locked.stderr)") }
    }

    func unlock() throws {
        try unlockKeybag()
        try trustGenericClients()
    }

    private func unlockKeybag() throws {
        let unlocked = try harness.tresor(["unlock", "--passcode-stdin"], input: passcode + "\n")
        guard unlocked.succeeded else { throw SecretServiceTestError.fixture("tresor unlock failed: \(unlocked.stderr)") }
    }

    /// Trusts the generic clients the tests drive, once per daemon, when ``trustsGenericClients``.
    /// Trusting needs the keybag unlocked: when a test's short auto-lock locked it first (a
    /// loaded machine is slow to set up), it is unlocked again and trusting tried again.
    private func trustGenericClients() throws {
        guard trustsGenericClients, !trusted else { return }
        var clients = [SecretTool.system, PythonClients.python]
        if let helper = try? GitCredentialHelper(harness: harness) { clients.append(helper.executable) }
        for attempt in 1...3 {
            do {
                try trust(clients)
                break
            } catch SecretServiceTestError.fixture(let message) where attempt < 3 && message.contains("the keybag is locked") {
                try unlockKeybag()
            }
        }
        trusted = true
    }

    /// `tresor secret-service trust add EXECUTABLE… --passcode-stdin`: the generic clients read
    /// their items without the user being asked.
    func trust(_ executables: [URL]) throws {
        let added = try harness.tresor(["secret-service", "trust", "add"] + executables.map(\.path) + ["--passcode-stdin"], input: passcode + "\n")
        guard added.succeeded else { throw SecretServiceTestError.fixture("tresor secret-service trust add failed: \(added.stderr)") }
    }

    var secretTool: SecretTool { SecretTool(harness: harness) }
    var python: PythonClients { PythonClients(harness: harness) }

    /// A marker secret, remembered for the scan at the end of the test; with a `length` (at
    /// least 12), exactly that many bytes, for the edges of the DH session's padding.
    func marker(_ name: String, length: Int? = nil) -> String {
        let random = (UUID().uuidString + UUID().uuidString).replacingOccurrences(of: "-", with: "")
        let secret = length.map { "e2e" + random.prefix($0 - 3) } ?? "e2e-ss-\(name)-\(random.prefix(10))"
        harness.secrets.append(secret)
        return secret
    }

    /// `tresor secret-service owners --json`: an array of owners, or an object whose `owners`
    /// is that array (beside the grants).
    func owners() throws -> [SecretServiceOwner] {
        let listed = try harness.tresor(["secret-service", "owners", "--json"])
        guard listed.succeeded else { throw SecretServiceTestError.fixture("tresor secret-service owners failed: \(listed.stderr)") }
        let json = Data(listed.stdout.utf8)
        if let owners = try? JSONDecoder().decode([SecretServiceOwner].self, from: json) { return owners }
        return try JSONDecoder().decode(OwnersAndGrants.self, from: json).owners
    }

    private struct OwnersAndGrants: Decodable {
        var owners: [SecretServiceOwner]
    }

    /// The id of the one Secret Service item labelled `label`, and its owner's description.
    func item(labelled label: String) throws -> (id: String, owner: String) {
        let found = try owners().flatMap { owner in owner.items.filter { $0.label == label }.map { ($0.id, owner.owner) } }
        guard found.count == 1, let item = found.first else {
            throw SecretServiceTestError.fixture("`tresor secret-service owners` lists \(found.count) items labelled \(label.debugDescription)")
        }
        return item
    }

    /// Whether an owner's description names `executable`: by its path (symlinks resolved) or by
    /// the SHA-256 of its file.
    func description(_ owner: String, names executable: URL) throws -> Bool {
        let file = executable.resolvingSymlinksInPath()
        let hashed = try harness.run(URL(fileURLWithPath: "/usr/bin/sha256sum"), [file.path], timeout: clientTimeout)
        let hash = hashed.stdout.split(separator: " ").first.map(String.init) ?? "not hashed"
        return owner.contains(file.path) || owner.contains(hash)
    }

    /// `tresor secret-service allow|revoke --exe EXECUTABLE (--item ID | --owner PATH) --passcode-stdin`.
    @discardableResult
    func grant(_ verb: String, to executable: URL, _ target: GrantTarget, passcode: String? = nil) throws -> Harness.Result {
        let selector: [String] =
            switch target {
            case .item(let id): ["--item", id]
            case .owner(let path): ["--owner", path.path]
            }
        return try harness.tresor(
            ["secret-service", verb, "--exe", executable.path] + selector + ["--passcode-stdin"], input: (passcode ?? self.passcode) + "\n")
    }

    enum GrantTarget {
        case item(String)
        case owner(URL)
    }
}

/// One entry of `tresor secret-service owners --json`.
struct SecretServiceOwner: Decodable {
    struct Item: Decodable {
        var id: String
        var label: String
    }

    var owner: String
    var items: [Item]
}

enum SecretServiceTestError: Error, CustomStringConvertible {
    case fixture(String)

    var description: String {
        switch self {
        case .fixture(let message): message
        }
    }
}
