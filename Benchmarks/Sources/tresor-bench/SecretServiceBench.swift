import Foundation
import TresorCrypto
import TresorDBus
import TresorKeybag
import TresorKeychain
import TresorKit
import TresorModel
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

// The freedesktop Secret Service (`org.freedesktop.secrets`) over D-Bus, measured with **one
// client for every provider**: ``SecretServiceClientBench`` (`tresor-bench ss-client`), run by
// ``SecretServiceBench`` against `tresord --secret-service` and by Benchmarks/peers.sh against
// gnome-keyring and KeePassXC, each on a private session bus without service folders
// (BENCHMARKS.md "Secret Service (D-Bus)").

/// The client: on the bus of `DBUS_SESSION_BUS_ADDRESS`, one connection (TresorDBus, libdbus,
/// blocking calls), the provider found by its name.
///
///   tresor-bench ss-client --name NAME --items N --out FILE [--smoke]
///
/// Measures `OpenSession` with `plain` and with `dh-ietf1024-…` (the call alone; the client's
/// own key pair and agreement timed apart), `SearchItems({service, account})` + `GetSecrets`
/// of the item found on one open session of each kind, storing a new item and replacing one
/// (``storing(pid:count:)``), the provider's CPU per operation
/// (`/proc/<pid>/stat` of the process owning the name), and, when `secret-tool` is installed,
/// `secret-tool store` and `secret-tool lookup` processes (each opens its own DH session, as
/// libsecret does). Writes one JSON object.
struct SecretServiceClientBench {
    let name: String
    let items: Int
    let smoke: Bool
    let address: String
    let connection: DBusConnection

    static func main(_ arguments: [String]) -> Int32 {
        func option(_ flag: String) -> String? {
            guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
            return arguments[index + 1]
        }
        guard let out = option("--out"), let items = option("--items").flatMap(Int.init), items > 0 else {
            log("usage: tresor-bench ss-client --name NAME --items N --out FILE [--smoke]")
            return 2
        }
        let name = option("--name") ?? "provider"
        var result: [String: Any] = ["provider": name, "items": items]
        do {
            guard let address = DBusConnection.sessionBusAddress(ProcessInfo.processInfo.environment) else {
                throw BenchError("DBUS_SESSION_BUS_ADDRESS is not set")
            }
            let bench = SecretServiceClientBench(
                name: name, items: items, smoke: arguments.contains("--smoke"), address: address,
                connection: try DBusConnection(address: address))
            result.merge(try bench.run()) { $1 }
        } catch {
            log("ss-client \(name): \(error)")
            result["error"] = "\(error)"
        }
        do {
            try JSONSerialization.data(withJSONObject: result, options: [.prettyPrinted, .sortedKeys]).write(to: URL(fileURLWithPath: out))
        } catch {
            log("ss-client: cannot write \(out): \(error)")
            return 1
        }
        return result["error"] == nil ? 0 : 1
    }

    // MARK: Calls

    func call(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue]) throws -> [DBusValue] {
        try connection.call(
            .methodCall(destination: SecretServiceWire.bus, path: path, interface: interface, member: member, arguments: arguments),
            timeoutMilliseconds: 60_000
        ).arguments
    }

    /// An open transfer session: its path, and how a secret sent on it opens.
    struct Session {
        let path: String
        let open: (_ parameters: [UInt8], _ value: [UInt8]) throws -> [UInt8]
    }

    func openPlain() throws -> (ms: Double, session: Session) {
        var reply: [DBusValue] = []
        let ms = try timeMs {
            reply = try call(SecretServiceWire.servicePath, SecretServiceWire.service, "OpenSession", [.string("plain"), .variant(.string(""))])
        }
        guard reply.count == 2, let path = reply[1].stringValue else { throw BenchError("OpenSession(plain) answered \(reply)") }
        return (ms, Session(path: path, open: { _, value in value }))
    }

    /// The call alone in `callMs`; the client's key pair (`keygenMs`) and its agreement with the
    /// provider's public key (`agreeMs`, DH + HKDF) around it.
    func openDH() throws -> (callMs: Double, keygenMs: Double, agreeMs: Double, session: Session) {
        var pair: DiffieHellman.KeyPair?
        let keygenMs = timeMs { pair = DiffieHellman.KeyPair() }
        var reply: [DBusValue] = []
        let callMs = try timeMs {
            reply = try call(
                SecretServiceWire.servicePath, SecretServiceWire.service, "OpenSession",
                [.string(SecretServiceWire.dh), .variant(.bytes(Array(pair!.publicKey)))])
        }
        guard reply.count == 2, let path = reply[1].stringValue, let serverKey = reply[0].unwrapped.byteArray else {
            throw BenchError("OpenSession(dh) answered \(reply)")
        }
        var open: ((_ parameters: [UInt8], _ value: [UInt8]) throws -> [UInt8])?
        let agreeMs = try timeMs {
            let key = try KeyDerivation.secretServiceSessionKey(sharedSecret: try pair!.sharedSecret(peerPublicKey: Data(serverKey)))
            open = { parameters, value in Array(try AESCBC.decrypt(Data(value), using: key, iv: Data(parameters))) }
        }
        return (callMs, keygenMs, agreeMs, Session(path: path, open: open!))
    }

    func close(_ session: Session) throws {
        _ = try call(session.path, SecretServiceWire.session, "Close", [])
    }

    /// `SearchItems` on the service, the paths of the unlocked items found.
    func search(_ attributes: [String: String]) throws -> [String] {
        let reply = try call(SecretServiceWire.servicePath, SecretServiceWire.service, "SearchItems", [.stringDictionary(attributes)])
        guard reply.count == 2, let unlocked = reply[0].objectPathList else { throw BenchError("SearchItems answered \(reply)") }
        return unlocked
    }

    /// `GetSecrets` of `items` on `session`: the (parameters, value) of each, in no order.
    func getSecrets(_ items: [String], _ session: Session) throws -> [(parameters: [UInt8], value: [UInt8])] {
        let reply = try call(
            SecretServiceWire.servicePath, SecretServiceWire.service, "GetSecrets", [.objectPaths(items), .objectPath(session.path)])
        guard let entries = reply.first?.elements else { throw BenchError("GetSecrets answered \(reply)") }
        return entries.compactMap { entry in
            guard case .dictEntry(_, .structure(let fields)) = entry, fields.count == 4,
                let parameters = fields[1].byteArray, let value = fields[2].byteArray
            else { return nil }
            return (parameters, value)
        }
    }

    // MARK: Run

    func providerPID() throws -> pid_t {
        guard case .string(let owner)? = try connection.callBus("GetNameOwner", [.string(SecretServiceWire.bus)]).first,
            case .uint32(let pid)? = try connection.callBus("GetConnectionUnixProcessID", [.string(owner)]).first
        else { throw BenchError("cannot tell which process owns \(SecretServiceWire.bus)") }
        return pid_t(bitPattern: pid)
    }

    func run() throws -> [String: Any] {
        // The provider may still be starting (KeePassXC opens its database after taking the name).
        let deadline = Date().addingTimeInterval(30)
        var ready = false
        while !ready {
            if case .boolean(true)? = try? connection.callBus("NameHasOwner", [.string(SecretServiceWire.bus)]).first,
                let found = try? search(SecretServiceWire.attributes(0).filter { $0.key != "tag" }), !found.isEmpty
            {
                ready = true
            } else {
                guard Date() < deadline else { throw BenchError("\(name): no unlocked item acct-0 on \(SecretServiceWire.bus) after 30 s") }
                usleep(100_000)
            }
        }
        let pid = try providerPID()
        var result: [String: Any] = [
            "provider_pid": Int(pid), "client": "tresor-bench ss-client (TresorDBus over libdbus, one connection, blocking calls)",
        ]
        let opens = smoke ? 10 : 200, dhOpens = smoke ? 5 : 100, lookups = smoke ? 30 : 1000
        var rng = SplitMix(state: UInt64(items) &+ 11)
        // Profiling hook (Benchmarks/profile.sh secret-service): after a 3 s pause,
        // TRESOR_BENCH_PROFILE=N makes N SearchItems + GetSecrets on one DH session ("pair"), or
        // with TRESOR_BENCH_PROFILE_PHASE=lookup N `secret-tool lookup` processes, each a new
        // client; then the client stops, so the daemon's profile holds that phase alone.
        if let n = ProcessInfo.processInfo.environment["TRESOR_BENCH_PROFILE"].flatMap(Int.init) {
            try profilePhase(n, rng: &rng)
            return result
        }

        // OpenSession: each session closed again (providers limit how many a client keeps).
        var samples: [Double] = []
        var cpu0 = cpuMs(of: pid)
        for _ in 0..<opens {
            let (ms, session) = try openPlain()
            samples.append(ms)
            try close(session)
        }
        var row = summary(samples)
        row["provider_cpu_ms_per_op_with_close"] = (cpuMs(of: pid) - cpu0) / Double(opens)
        result["open_session_plain"] = row
        var keygen: [Double] = [], agree: [Double] = []
        samples = []
        cpu0 = cpuMs(of: pid)
        for _ in 0..<dhOpens {
            let opened = try openDH()
            samples.append(opened.callMs)
            keygen.append(opened.keygenMs)
            agree.append(opened.agreeMs)
            try close(opened.session)
        }
        row = summary(samples)
        row["provider_cpu_ms_per_op_with_close"] = (cpuMs(of: pid) - cpu0) / Double(dhOpens)
        result["open_session_dh"] = row
        result["client_dh_keygen"] = summary(keygen)
        result["client_dh_agree"] = summary(agree)

        // SearchItems + GetSecrets on one open session of each kind, as a long-lived client does.
        for (kind, session) in [("dh", try openDH().session), ("plain", try openPlain().session)] {
            for _ in 0..<50 {
                _ = try getSecrets(try search(["service": "bench", "account": "acct-\(Int.random(in: 0..<items, using: &rng))"]), session)
            }
            var searches: [Double] = [], gets: [Double] = [], both: [Double] = []
            let providerCPU0 = cpuMs(of: pid), clientCPU0 = selfCPUMs(), wall0 = nowNanos()
            for _ in 0..<lookups {
                let i = Int.random(in: 0..<items, using: &rng)
                let t0 = nowNanos()
                let found = try search(["service": "bench", "account": "acct-\(i)"])
                let t1 = nowNanos()
                let secrets = try getSecrets(Array(found.prefix(1)), session)
                let t2 = nowNanos()
                searches.append(Double(t1 - t0) / 1e6)
                gets.append(Double(t2 - t1) / 1e6)
                both.append(Double(t2 - t0) / 1e6)
                guard found.count == 1, secrets.count == 1 else {
                    throw BenchError("\(name): acct-\(i) found \(found.count) items, \(secrets.count) secrets")
                }
                guard !(try session.open(secrets[0].parameters, secrets[0].value)).isEmpty else {
                    throw BenchError("\(name): acct-\(i)'s secret is empty")
                }
            }
            let wall = Double(nowNanos() - wall0) / 1e6
            var lookup = summary(both)
            lookup["provider_cpu_ms_per_op"] = (cpuMs(of: pid) - providerCPU0) / Double(lookups)
            lookup["client_cpu_ms_per_op"] = (selfCPUMs() - clientCPU0) / Double(lookups)
            lookup["wall_ms_per_op"] = wall / Double(lookups)
            result["lookup_\(kind)"] = lookup
            result["search_\(kind)"] = summary(searches)
            result["get_secrets_\(kind)"] = summary(gets)
            try close(session)
        }
        // A client's first call on a new connection, which is when Tresor identifies it (the
        // bus's pid and uid, /proc, the executable's hash): the service's properties (`GetAll`,
        // libsecret's first call), beside the same call on this known connection.
        let getAll = { (connection: DBusConnection) throws -> Void in
            _ = try connection.call(
                .methodCall(
                    destination: SecretServiceWire.bus, path: SecretServiceWire.servicePath,
                    interface: "org.freedesktop.DBus.Properties", member: "GetAll", arguments: [.string(SecretServiceWire.service)]))
        }
        var hello: [Double] = [], first: [Double] = []
        samples = []
        for _ in 0..<(smoke ? 3 : 30) {
            var fresh: DBusConnection?
            hello.append(try timeMs { fresh = try DBusConnection(address: address) })
            first.append(try timeMs { try getAll(fresh!) })
            samples.append(try timeMs { try getAll(connection) })
        }
        result["new_connection"] = summary(hello)
        result["first_call_new_connection"] = summary(first)
        result["get_all_known_connection"] = summary(samples)
        // SearchItems by the one attribute no other item shares (`account`) — beside the
        // lookup's {service, account}, whose `service=bench` every item of the store shares.
        samples = []
        for n in 0..<(smoke ? 30 : 300) {
            let i = Int.random(in: 0..<items, using: &rng)
            var found: [String] = []
            let ms = try timeMs { found = try search(["account": "acct-\(i)"]) }
            guard found.count == 1 else { throw BenchError("\(name): account=acct-\(i) found \(found.count) items") }
            if n >= 10 { samples.append(ms) }
        }
        result["search_unique_attribute"] = summary(samples)
        // The floors under every call: a round trip to the bus itself (`GetId`, answered by
        // dbus-daemon), and one through the bus to the provider that does no work (`Peer.Ping`).
        for (key, message) in [
            (
                "bus_round_trip",
                {
                    DBusMessage.methodCall(
                        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetId")
                }
            ),
            (
                "provider_ping",
                {
                    DBusMessage.methodCall(
                        destination: SecretServiceWire.bus, path: SecretServiceWire.servicePath, interface: "org.freedesktop.DBus.Peer",
                        member: "Ping")
                }
            ),
        ] as [(String, () -> DBusMessage)] {
            samples = []
            for n in 0..<(lookups + 50) {
                let call = message()
                let ms = try timeMs { _ = try connection.call(call) }
                if n >= 50 { samples.append(ms) }
            }
            result[key] = summary(samples)
        }
        log(
            "ss-client \(name) @\(items): OpenSession plain \(p50(result["open_session_plain"])) ms, dh \(p50(result["open_session_dh"])) ms; "
                + "SearchItems+GetSecrets \(p50(result["lookup_dh"])) ms (dh), \(p50(result["lookup_plain"])) ms (plain); "
                + "floors: bus \(p50(result["bus_round_trip"])) ms, Ping \(p50(result["provider_ping"])) ms")
        result.merge(try storing(pid: pid, count: smoke ? 10 : 200)) { $1 }

        // One `secret-tool` process per operation, on items of its own (`secret-tool store`).
        if let secretTool = Self.secretTool {
            result.merge(try secretToolProcesses(secretTool, pid: pid)) { $1 }
        } else {
            log("ss-client: secret-tool is not installed (apt-get install libsecret-tools): its processes are not measured")
            result["secret_tool_lookup"] = ["n": 0, "skipped": "secret-tool is not installed"]
        }
        let providerMemory = memory(of: pid)
        (result["provider_rss_kb"], result["provider_hwm_kb"]) = (providerMemory.rssKB, providerMemory.hwmKB)
        return result
    }

    /// Storing as clients do, after every lookup above (the items it adds change none of them):
    /// python-secretstorage asks the default collection's `Locked` and then `CreateItem`s a new
    /// item (`store_new`); secret-tool and git's helper `CreateItem` with `replace` over an item
    /// that exists (`store_replace`). On a plain session, into the `default` alias; the provider's
    /// CPU per store beside each. A provider that asks the user before it stores (KeePassXC with
    /// its confirmations on) answers with a prompt: it is dismissed, and storing is not measured.
    func storing(pid: pid_t, count: Int) throws -> [String: Any] {
        let session = try openPlain().session
        defer { try? close(session) }
        let collection = "/org/freedesktop/secrets/aliases/default"
        struct AsksTheUser: Error {}
        func create(_ attributes: [String: String], replace: Bool) throws {
            let properties: DBusValue = .properties([
                "org.freedesktop.Secret.Item.Label": .string("bench-store"),
                "org.freedesktop.Secret.Item.Attributes": .stringDictionary(attributes),
            ])
            let secret: DBusValue = .structure([
                .objectPath(session.path), .bytes([]), .bytes(Array(SecretServiceWire.secret.utf8)), .string("text/plain"),
            ])
            let reply = try call(collection, "org.freedesktop.Secret.Collection", "CreateItem", [properties, secret, .boolean(replace)])
            guard reply.count == 2, let prompt = reply[1].stringValue else { throw BenchError("\(name): CreateItem answered \(reply)") }
            guard prompt == "/" else {
                _ = try? call(prompt, "org.freedesktop.Secret.Prompt", "Dismiss", [])
                throw AsksTheUser()
            }
        }
        do {
            try create(["service": "bench-store", "account": "replaced"], replace: true)
        } catch is AsksTheUser {
            let skipped: [String: Any] = ["n": 0, "skipped": "CreateItem answered with a prompt: the provider asks the user before it stores"]
            log("ss-client \(name): CreateItem asks the user: storing is not measured")
            return ["store_new": skipped, "store_replace": skipped]
        }
        var result: [String: Any] = [:]
        var samples: [Double] = []
        var cpu0 = cpuMs(of: pid)
        for k in 0..<count {
            samples.append(
                try timeMs {
                    _ = try call(
                        collection, "org.freedesktop.DBus.Properties", "Get", [.string("org.freedesktop.Secret.Collection"), .string("Locked")])
                    try create(["service": "bench-store", "account": "new-\(k)"], replace: false)
                })
        }
        var row = summary(samples)
        row["provider_cpu_ms_per_op"] = (cpuMs(of: pid) - cpu0) / Double(count)
        result["store_new"] = row
        samples = []
        cpu0 = cpuMs(of: pid)
        for _ in 0..<count {
            samples.append(try timeMs { try create(["service": "bench-store", "account": "replaced"], replace: true) })
        }
        row = summary(samples)
        row["provider_cpu_ms_per_op"] = (cpuMs(of: pid) - cpu0) / Double(count)
        result["store_replace"] = row
        log(
            "ss-client \(name) @\(items): a new item (Locked + CreateItem) \(p50(result["store_new"])) ms, a replacement \(p50(result["store_replace"])) ms"
        )
        return result
    }

    /// The profiling hook's phase: `n` open-connection pairs, or `n` `secret-tool lookup` processes.
    func profilePhase(_ n: Int, rng: inout SplitMix) throws {
        sleep(3)
        guard ProcessInfo.processInfo.environment["TRESOR_BENCH_PROFILE_PHASE"] == "lookup" else {
            let session = try openDH().session
            for _ in 0..<n {
                _ = try getSecrets(try search(["service": "bench", "account": "acct-\(Int.random(in: 0..<items, using: &rng))"]), session)
            }
            try close(session)
            return
        }
        guard let secretTool = Self.secretTool else { throw BenchError("secret-tool is not installed (apt-get install libsecret-tools)") }
        let environment = ProcessInfo.processInfo.environment
        try Child.run(
            [secretTool, "store", "--label=bench-cli", "service", "bench-cli", "account", "cli-0"], environment: environment,
            stdin: "cli-secret-0")
        for _ in 0..<n { try Child.run([secretTool, "lookup", "service", "bench-cli", "account", "cli-0"], environment: environment) }
    }

    static var secretTool: String? {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/secret-tool") ? "/usr/bin/secret-tool" : nil
    }

    func secretToolProcesses(_ secretTool: String, pid: pid_t) throws -> [String: Any] {
        let environment = ProcessInfo.processInfo.environment
        let stores = smoke ? 2 : 10, lookups = smoke ? 3 : 30
        var samples: [Double] = []
        for k in 0..<stores {
            samples.append(
                try timeMs {
                    try Child.run(
                        [secretTool, "store", "--label=bench-cli", "service", "bench-cli", "account", "cli-\(k)"],
                        environment: environment, stdin: "cli-secret-\(k)")
                })
        }
        var result: [String: Any] = ["secret_tool_store": summary(samples)]
        // What one answers, checked once.
        let check = try makeTemporaryFolder("tresor-ss-check").appendingPathComponent("out")
        defer { try? FileManager.default.removeItem(at: check.deletingLastPathComponent()) }
        try Child.run([secretTool, "lookup", "service", "bench-cli", "account", "cli-0"], environment: environment, output: check.path)
        let answered = try String(contentsOf: check, encoding: .utf8)
        guard answered.hasPrefix("cli-secret-0") else { throw BenchError("secret-tool lookup answered \(answered.debugDescription)") }
        samples = []
        let cpu0 = cpuMs(of: pid)
        for k in 0..<lookups {
            samples.append(
                try timeMs {
                    try Child.run([secretTool, "lookup", "service", "bench-cli", "account", "cli-\(k % stores)"], environment: environment)
                })
        }
        var lookup = summary(samples)
        lookup["provider_cpu_ms_per_op"] = (cpuMs(of: pid) - cpu0) / Double(lookups)
        result["secret_tool_lookup"] = lookup
        log(
            "ss-client \(name): secret-tool store \(p50(result["secret_tool_store"])) ms, lookup \(p50(lookup)) ms "
                + "(provider CPU \(String(format: "%.2f", lookup["provider_cpu_ms_per_op"] as? Double ?? 0)) ms per lookup)")
        return result
    }

    private func p50(_ row: Any?) -> String {
        String(format: "%.3f", ((row as? [String: Any])?["p50_ms"] as? Double) ?? -1)
    }
}

/// `tresord --secret-service` measured with ``SecretServiceClientBench``: a home of its own
/// (no application registered), a private `dbus-daemon` with no service folders, and at each
/// item count the store grown in-process while the daemon is stopped — each item exactly as
/// `KeychainCollection.create` stores it, in the group the client will have (``executableGroup(_:)``)
/// — then a fresh `tresord --secret-service`, unlocked through its socket, and one
/// `tresor-bench ss-client` process.
///
/// As deployed, a user's daemon on that user's session bus: run as root (as `scripts/bench` is),
/// the scenario runs itself again as an unprivileged user made for it (``BenchUser``), so the bus,
/// tresord, its clients and the check of who holds a new client's socket see that user's
/// processes only — a daemon running as root would look at every process of the machine.
struct SecretServiceBench {
    let binDirectory: URL
    let counts: [Int]
    let smoke: Bool

    static let dbusDaemon = "/usr/bin/dbus-daemon"

    func run() throws -> [String: Any] {
        guard FileManager.default.isExecutableFile(atPath: Self.dbusDaemon) else {
            log("secret service: skipped — \(Self.dbusDaemon) is missing (apt-get install dbus)")
            return ["skipped": "\(Self.dbusDaemon) is missing"]
        }
        if getuid() == 0 { return try runAsUser(try BenchUser.shared()) }
        var result = try runHere()
        result["run_as"] = "uid \(getuid())"
        return result
    }

    /// This scenario in a `tresor-bench` of its own, run as `user`; its result.
    func runAsUser(_ user: BenchUser) throws -> [String: Any] {
        let folder = try makeTemporaryFolder("tresor-bench-ss-user")
        defer { try? FileManager.default.removeItem(at: folder) }
        guard chown(folder.path, user.uid, user.gid) == 0 else { throw BenchError("cannot give \(folder.path) to \(user.name)") }
        let out = folder.appendingPathComponent("secret-service.json").path
        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var environment = ["PATH": "/usr/bin:/bin", "HOME": folder.path]
        // Benchmarks/profile.sh's hook.
        for name in ["TRESOR_BENCH_PROFILE", "TRESOR_BENCH_PROFILE_PHASE"] { environment[name] = ProcessInfo.processInfo.environment[name] }
        log("secret service: run as \(user.name) (uid \(user.uid)), as a user's daemon is")
        let status = try Child(
            user.wrapping(
                [
                    me, "--bin", binDirectory.path, "--out", out, "--only", "secret-service", "--ss-counts",
                    counts.map(String.init).joined(separator: ","),
                ]
                    + (smoke ? ["--smoke"] : [])),
            environment: environment, output: "/dev/stderr"
        ).wait()
        guard let whole = (try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out)))) as? [String: Any],
            var result = whole["secret_service"] as? [String: Any]
        else { throw BenchError("the scenario run as \(user.name) wrote nothing (exit \(status))") }
        result["run_as"] = "uid \(user.uid) (\(user.name), unprivileged, made for the run)"
        return result
    }

    func runHere() throws -> [String: Any] {
        let bench = try KeychainBench(binDirectory: binDirectory, counts: counts, smoke: smoke)
        defer { try? FileManager.default.removeItem(at: bench.work) }
        let bus = try PrivateSessionBus(folder: bench.work)
        defer { bus.stop() }
        let clientLog = bench.work.appendingPathComponent("ss-client.log").path

        var daemon = try bench.startDaemon()
        try TresorClient.connect(paths: bench.paths, startDaemon: false).initialize(passcode: KeychainBench.passcode)
        bench.stopDaemon(daemon)

        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let group = try Self.executableGroup(me)
        var result: [String: Any] = [
            "client_group": group, "bus": "a private dbus-daemon (\(Self.busVersion())) with no service folders",
            "secret_tool": Self.secretToolVersion(),
        ]
        var environment = bench.environment.merging(["DBUS_SESSION_BUS_ADDRESS": bus.address]) { $1 }
        // Benchmarks/profile.sh's hook.
        for name in ["TRESOR_BENCH_PROFILE", "TRESOR_BENCH_PROFILE_PHASE"] { environment[name] = ProcessInfo.processInfo.environment[name] }
        // secret-tool's own floor: the process on this bus with nobody owning the name.
        if let secretTool = SecretServiceClientBench.secretTool {
            var samples: [Double] = []
            for _ in 0..<(smoke ? 3 : 20) {
                samples.append(
                    timeMs {
                        _ = try? Child([secretTool, "lookup", "service", "bench-cli", "account", "cli-0"], environment: environment).wait()
                    })
            }
            result["secret_tool_no_provider"] = summary(samples)
        }
        result["socket_holders_scan"] = Self.socketHoldersScan(rounds: smoke ? 3 : 30)

        var perCount: [[String: Any]] = []
        var filled = 0
        for count in counts {
            do {
                log("secret service: filling to \(count) items (in-process, daemon stopped, group \(group.prefix(24))…)")
                let (fillSeconds, inProcess) = try fill(bench, filled..<count, group: group)
                filled = count
                daemon = try bench.startDaemon(arguments: ["--secret-service"], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
                defer { bench.stopDaemon(daemon) }
                let unlockMs = try timeMs {
                    try TresorClient.connect(paths: bench.paths, startDaemon: false).unlock(passcode: KeychainBench.passcode)
                }
                // secret-tool is a generic client: its reads are measured as the user who trusts it gets them.
                // Trusting is the user's act, through the `tresor` CLI only (the daemon refuses any other client).
                if let secretTool = SecretServiceClientBench.secretTool {
                    try Child.run(
                        [
                            bench.binDirectory.appendingPathComponent("tresor").path, "secret-service", "trust", "add", secretTool,
                            "--home", bench.home.path, "--passcode-stdin",
                        ],
                        environment: bench.environment, stdin: KeychainBench.passcode + "\n",
                        output: bench.work.appendingPathComponent("trust.log").path)
                }
                if ProcessInfo.processInfo.environment["TRESOR_BENCH_PROFILE"] != nil { log("profile: daemon pid \(daemon.pid)") }
                let out = bench.work.appendingPathComponent("ss-\(count).json")
                let status = try Child(
                    [me, "ss-client", "--name", "tresor", "--items", "\(count)", "--out", out.path] + (smoke ? ["--smoke"] : []),
                    environment: environment, output: clientLog
                ).wait()
                guard var entry = (try? JSONSerialization.jsonObject(with: Data(contentsOf: out))) as? [String: Any] else {
                    throw BenchError("ss-client wrote nothing (exit \(status)): \(Self.tail(clientLog))")
                }
                if let error = entry["error"] { throw BenchError("ss-client: \(error)") }
                entry["fill_seconds"] = fillSeconds
                entry["in_process"] = inProcess
                entry["fill_items"] = count - (perCount.last?["items"] as? Int ?? 0)
                entry["keybag_unlock_ms"] = unlockMs
                entry["database_bytes"] = filesSize(in: bench.home, prefix: "login.keychain.db")
                perCount.append(entry)
            } catch {
                log("secret service @\(count) failed: \(error) (daemon log: \(Self.tail(bench.daemonLog)))")
                result["counts"] = perCount
                result["error"] = "at \(count) items: \(error)"
                return result
            }
        }
        result["counts"] = perCount
        return result
    }

    /// Adds the items `range` as the Secret Service stores them (`KeychainCollection.create`):
    /// generic passwords of service `org.freedesktop.secrets`, a random account, the attribute
    /// map as `custom`, the content type in `generic`, in `group`.
    ///
    /// Then, on the same store and still without the daemon, what the provider asks the keychain
    /// for each lookup, timed in-process (`inProcess`): `KeychainCollection.search`'s query for
    /// {service, account} and for {account} alone, and `KeychainCollection.secret`'s by id.
    func fill(_ bench: KeychainBench, _ range: Range<Int>, group: String) throws -> (seconds: Double, inProcess: [String: Any]) {
        let keybag = try Keybag.open(paths: bench.paths)
        try keybag.unlock(passcode: try Passcode(KeychainBench.passcode))
        let keychain = try KeychainStore(file: bench.paths.loginKeychain, keybag: keybag)
        let caller = Caller(accessGroups: [group], defaultAccessGroup: group)
        let secret = Data(SecretServiceWire.secret.utf8)
        let start = nowNanos()
        for i in range {
            var attributes = ItemAttributes()
            attributes.service = "org.freedesktop.secrets"
            attributes.account = UUID().uuidString.lowercased()
            attributes.label = "label-\(i)"
            attributes.custom = SecretServiceWire.attributes(i)
            attributes.generic = Data("text/plain".utf8)
            try keychain.add(.genericPassword, attributes: attributes, secret: secret, caller: caller)
            if i % 20_000 == 19_999 { log("  filled \(i + 1)") }
        }
        let seconds = Double(nowNanos() - start) / 1e9

        var rng = SplitMix(state: UInt64(range.upperBound) &+ 5)
        var search: [Double] = [], unique: [Double] = [], byID: [Double] = []
        for n in 0..<(smoke ? 20 : 200) + 10 {
            let i = Int.random(in: 0..<range.upperBound, using: &rng)
            let attributes = SecretServiceWire.attributes(i)
            var query = ItemQuery(.genericPassword, limit: .all)  // as KeychainCollection.search asks
            query.attributes.custom = ["service": attributes["service"]!, "account": attributes["account"]!]
            var found: [KeychainItem] = []
            let both = try timeMs { found = try keychain.copyMatching(query, caller: caller) }
            query.attributes.custom = ["account": attributes["account"]!]
            let one = try timeMs { found = try keychain.copyMatching(query, caller: caller) }
            guard found.count == 1 else { throw BenchError("in-process search found \(found.count) items for acct-\(i)") }
            // The query KeychainCollection.secret makes.
            let idQuery = ItemQuery(.genericPassword, id: found[0].id, limit: .one, returnData: true, returnAttributes: true)
            let get = try timeMs { _ = try keychain.copyMatching(idQuery, caller: caller) }
            if n >= 10 { search.append(both); unique.append(one); byID.append(get) }
        }
        return (seconds, ["search": summary(search), "search_unique_attribute": summary(unique), "secret_by_id": summary(byID)])
    }

    /// What tresord's check of who else holds a new client's bus socket costs here now
    /// (`UnixSockets.holders`, as `BusConnections` calls it: every descriptor of every process of
    /// the user, read from /proc), the CPU of one scan that finds nobody, with how many processes and
    /// descriptors it read: the floor under identifying each new connection.
    static func socketHoldersScan(rounds: Int) -> [String: Any] {
        var samples: [Double] = []
        for _ in 0..<rounds {
            let before = selfCPUMs()
            _ = UnixSockets.holders(of: [0], uid: getuid(), excluding: getpid())
            samples.append(selfCPUMs() - before)
        }
        var processes = 0, descriptors = 0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(entry) != nil {
            var info = stat()
            guard stat("/proc/\(entry)", &info) == 0, info.st_uid == getuid(),
                let held = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(entry)/fd")
            else { continue }
            processes += 1
            descriptors += held.count
        }
        return [
            "cpu_ms_mean": samples.reduce(0, +) / Double(max(1, samples.count)), "rounds": rounds,
            "processes": processes, "descriptors": descriptors,
        ]
    }

    /// The group a tresord of this uid gives the unregistered executable at `path`, as
    /// `SecretServiceIdentities.group` decides: by path when the daemon is not root's and the
    /// file and every folder above it are root's and writable by root alone, else `exe-sha256:`
    /// and the SHA-256 of the file.
    static func executableGroup(_ path: String) throws -> String {
        if getuid() != 0 && SystemFiles.isSystemOwned(path) { return ExecutableGroup.byPath(path) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw BenchError("cannot open \(path)") }
        defer { close(fd) }
        return ExecutableGroup.byHash(Array(try Digest.sha256(readingFileDescriptor: fd)))
    }

    static func tail(_ path: String) -> String {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(5).joined(separator: " | ")
    }

    static func busVersion() -> String { commandOutput(["/usr/bin/dbus-daemon", "--version"]).split(separator: "\n").first.map(String.init) ?? "?" }

    static func secretToolVersion() -> String {
        SecretServiceClientBench.secretTool == nil ? "not installed" : "libsecret-tools (see peer-versions.txt)"
    }

    static func commandOutput(_ arguments: [String]) -> String {
        guard let folder = try? makeTemporaryFolder("tresor-cmd") else { return "" }
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("out").path
        guard let child = try? Child(arguments, environment: [:], output: file) else { return "" }
        child.wait()
        return (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
    }
}

/// A private session bus (Debian's `dbus-daemon`) whose configuration has no service folders,
/// so nothing is started on demand and only the provider under test can own the name
/// (BENCHMARKS.md, "How each scenario is measured"; `private_bus` in `Benchmarks/peers.sh`).
struct PrivateSessionBus {
    let address: String
    let child: Child

    init(folder: URL) throws {
        let configuration = folder.appendingPathComponent("bus.conf")
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig><type>session</type><keep_umask/><listen>unix:dir=\(folder.path)</listen><auth>EXTERNAL</auth>
        <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy></busconfig>
        """.write(to: configuration, atomically: true, encoding: .utf8)
        let addressFile = folder.appendingPathComponent("bus.address").path
        child = try Child(
            [SecretServiceBench.dbusDaemon, "--config-file=\(configuration.path)", "--nofork", "--print-address=1"],
            environment: [:], output: addressFile)
        let deadline = Date().addingTimeInterval(10)
        while true {
            // stdout and stderr share the file: the address is the line that starts with "unix:".
            if let text = try? String(contentsOfFile: addressFile, encoding: .utf8),
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix("unix:") }), text.contains("\n")
            {
                address = String(line)
                return
            }
            guard Date() < deadline else {
                kill(child.pid, SIGKILL)
                child.wait()
                throw BenchError("dbus-daemon printed no address")
            }
            usleep(10_000)
        }
    }

    func stop() {
        kill(child.pid, SIGTERM)
        child.wait()
    }
}

/// The names and items every provider is measured with.
enum SecretServiceWire {
    /// The items every provider holds before the client runs: `service=bench account=acct-<i>
    /// tag=label-<i>` for i in 0..<items (peers.py's fill, and this scenario's).
    static func attributes(_ i: Int) -> [String: String] { ["service": "bench", "account": "acct-\(i)", "tag": "label-\(i)"] }
    static let secret = "s3cret-value-0123456789abcdef0123"
    /// The bus name, the service's path and interface, the session's interface.
    static let (bus, servicePath) = ("org.freedesktop.secrets", "/org/freedesktop/secrets")
    static let (service, session) = ("org.freedesktop.Secret.Service", "org.freedesktop.Secret.Session")
    static let dh = "dh-ietf1024-sha256-aes128-cbc-pkcs7"
}
