import Foundation
import TresorCrypto
import TresorKeybag
import TresorKeychain
import TresorKit
import TresorNotes

#if canImport(Glibc)
import Glibc
#endif

/// Backup and restore (BENCHMARKS.md, "Backup and restore"): a home of `items` generic passwords, `notes` notes and
/// `attachmentBytes` of attachments, filled in-process, then `tresor backup create` and
/// `tresor backup restore` (into a second home) through freshly started daemons, beside
/// `age -p` encrypting a tar of the same home (Debian's `age`, driven on a pty). Reports wall
/// time, throughput over the backup file's bytes, the daemon's peak RSS growth, and the KDF's cost
/// at the work factor written (18, as `age -p`).
struct BackupBench {
    static let passcode = "bench backup passcode"
    static let passphrase = "bench backup passphrase"
    static let workFactor = 18
    static let age = "/usr/bin/age"

    let binDirectory: URL
    let smoke: Bool
    let items: Int
    let notes: Int
    let attachmentBytes: Int

    init(binDirectory: URL, smoke: Bool) {
        self.binDirectory = binDirectory
        self.smoke = smoke
        items = smoke ? 200 : 10_000
        notes = smoke ? 100 : 10_000
        attachmentBytes = smoke ? 4 << 20 : 1_000_000_000
    }

    func run() throws -> [String: Any] {
        let work = try makeTemporaryFolder("tresor-bench-backup")
        defer { try? FileManager.default.removeItem(at: work) }
        let source = try BenchHome(work: work, name: "source", binDirectory: binDirectory)
        let fillStart = nowNanos()
        try fill(source)
        log(
            "backup: filled \(items) items, \(notes) notes, \(attachmentBytes >> 20) MiB of attachments in \(Int(Double(nowNanos() - fillStart) / 1e9)) s"
        )
        let homeBytes = treeSize(source.home)
        var result: [String: Any] = [
            "items": items, "notes": notes, "attachment_bytes": attachmentBytes, "home_bytes": homeBytes, "work_factor": Self.workFactor,
        ]
        var kdf = Double.infinity
        for _ in 0..<(smoke ? 1 : 3) {
            kdf = min(
                kdf,
                try timeMs {
                    _ = try Scrypt.deriveKey(from: Data(Self.passphrase.utf8), salt: Data(count: 44), log2Rounds: Self.workFactor)
                })
        }
        result["kdf_ms"] = kdf

        // Each side's best of three runs (age's below too): a 2-core machine's other work
        // slows a run that uses both cores (sealing beside reading) more than age's one thread.
        let rounds = smoke ? 1 : 3
        let file = work.appendingPathComponent("home.tresor-backup")
        result["create"] = try Self.fastest(rounds) {
            try source.measure {
                try Child.run(
                    [source.tresor, "backup", "create", "--out", file.path, "--passcode-stdin", "--work-factor", "\(Self.workFactor)"],
                    environment: source.environment, stdin: "\(Self.passcode)\n\(Self.passphrase)\n\(Self.passphrase)\n", output: source.log)
            }
        }
        let fileBytes = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
        result["backup_bytes"] = fileBytes
        source.stop()

        var round = 0
        result["restore"] = try Self.fastest(rounds) {
            round += 1
            let target = try BenchHome(work: work, name: "target-\(round)", binDirectory: binDirectory)
            defer {
                target.stop()
                try? FileManager.default.removeItem(at: target.home)
            }
            try target.start()
            try Child.run(
                [target.tresor, "init", "--passcode-stdin"], environment: target.environment, stdin: Self.passcode + "\n", output: target.log)
            return try target.measure {
                try Child.run(
                    [target.tresor, "backup", "restore", file.path, "--passcode-stdin"], environment: target.environment,
                    stdin: "\(Self.passcode)\n\(Self.passphrase)\n", output: target.log)
            }
        }
        for phase in ["create", "restore"] {
            guard var figures = result[phase] as? [String: Any], let seconds = figures["seconds"] as? Double else { continue }
            figures["MBps"] = Double(fileBytes) / 1e6 / seconds
            result[phase] = figures
        }

        if FileManager.default.isExecutableFile(atPath: Self.age) {
            let out = work.appendingPathComponent("tar.age")
            var best = Double.infinity
            for _ in 0..<rounds {
                try? FileManager.default.removeItem(at: out)
                best = min(best, try timeMs { try Self.ageOfTar(folder: source.home, to: out) })
            }
            let ageBytes = (try FileManager.default.attributesOfItem(atPath: out.path)[.size] as? Int) ?? 0
            let ageMBps = Double(ageBytes) / 1e6 / (best / 1e3)
            result["age_p_tar"] = ["seconds": best / 1e3, "bytes": ageBytes, "MBps": ageMBps]
            for phase in ["create", "restore"] {
                if let figures = result[phase] as? [String: Any], let mbps = figures["MBps"] as? Double { result["\(phase)_vs_age"] = mbps / ageMBps }
            }
            log(
                "backup: age -p of a tar of the home \(Int(ageMBps)) MB/s; create \(Int((result["create_vs_age"] as? Double ?? 0) * 100)) %, restore \(Int((result["restore_vs_age"] as? Double ?? 0) * 100)) % of it"
            )
        } else {
            result["age_p_tar"] = "age not installed"
        }
        return result
    }

    /// The figures of the fastest of `rounds` runs of `run` (by their `seconds`), with how many ran.
    static func fastest(_ rounds: Int, _ run: () throws -> [String: Any]) throws -> [String: Any] {
        var best: [String: Any] = [:]
        for _ in 0..<rounds {
            let figures = try run()
            if (figures["seconds"] as? Double ?? .infinity) < (best["seconds"] as? Double ?? .infinity) { best = figures }
        }
        best["rounds"] = rounds
        return best
    }

    /// The source home: items through the keychain, notes and attachments through the notes
    /// store, in this process, before its daemon starts.
    private func fill(_ home: BenchHome) throws {
        let keybag = try Keybag.create(paths: home.paths, passcode: try Passcode(Self.passcode))
        let keychain = try KeychainStore(file: home.paths.loginKeychain, keybag: keybag)
        let caller = Caller(accessGroups: ["tresor"], defaultAccessGroup: "tresor", seesEveryGroup: true)
        for index in 0..<items {
            var attributes = ItemAttributes()
            attributes.service = "bench.backup.\(index)"
            attributes.account = "ada"
            attributes.label = "Backup bench item \(index)"
            try keychain.add(.genericPassword, attributes: attributes, secret: Data("secret-\(index)-\(UUID().uuidString)".utf8), caller: caller)
        }
        let store = try NotesStore(paths: home.paths, keybag: keybag)
        var ids: [String] = []
        for index in 0..<notes {
            let body = String(repeating: "Note \(index) body line. ", count: 20)
            ids.append(try store.createNote(NoteDraft(title: "Bench note \(index)", body: body)).id)
        }
        let pieces = 16
        let piece = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 29) })
        for index in 0..<pieces {
            let upload = try store.beginAttachment(to: ids[index % ids.count], kind: .file, name: "bench-\(index).bin")
            var left = attachmentBytes / pieces
            while left > 0 {
                let count = min(left, piece.count)
                try upload.append(piece.prefix(count))
                left -= count
            }
            _ = try upload.finish()
        }
        try home.start()
        try Child.run([home.tresor, "unlock", "--passcode-stdin"], environment: home.environment, stdin: Self.passcode + "\n", output: home.log)
    }

    /// `tar -cf - home | age -p -o out`, on a pty that types the passphrase at age's prompts.
    static func ageOfTar(folder: URL, to out: URL) throws {
        let shell = "tar -cf - -C '\(folder.deletingLastPathComponent().path)' '\(folder.lastPathComponent)' | \(age) -p -o '\(out.path)'"
        try Child.run(
            ["/usr/bin/python3", "-c", ptyDriver, "/bin/sh", "-c", shell], environment: ["PATH": "/usr/bin:/bin"],
            stdin: passphrase + "\n")
    }

    static let ptyDriver = """
        import os, pty, sys
        secret = sys.stdin.readline().rstrip("\\n").encode()
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(sys.argv[1], sys.argv[1:])
        seen = b""
        while True:
            try:
                data = os.read(fd, 1024)
            except OSError:
                break
            if not data:
                break
            seen += data
            if b"assphrase" in seen and seen.rstrip().endswith(b":"):
                os.write(fd, secret + b"\\n")
                seen = b""
        _, status = os.waitpid(pid, 0)
        sys.exit(os.waitstatus_to_exitcode(status))
        """
}

/// A home of the backup scenario with its own daemon (release `tresord`, started as the
/// keychain scenarios start theirs).
final class BenchHome {
    let home: URL
    let paths: TresorPaths
    let environment: [String: String]
    let tresor: String
    let tresord: String
    let log: String
    private var daemon: Child?
    /// More arguments for `tresord` (the web scenarios: `--web PORT`, a database).
    var extraArguments: [String] = []
    /// The running daemon's process id.
    var pid: pid_t? { daemon?.pid }

    init(work: URL, name: String, binDirectory: URL) throws {
        home = work.appendingPathComponent(name)
        let runtime = work.appendingPathComponent("run-\(name)")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let state = work.appendingPathComponent("state-\(name)")
        paths = TresorPaths(home: home.path, environment: ["XDG_RUNTIME_DIR": runtime.path, "HOME": work.path, "XDG_STATE_HOME": state.path])
        environment = [
            "XDG_RUNTIME_DIR": runtime.path, "HOME": work.path, "XDG_STATE_HOME": state.path, "PATH": "/usr/bin:/bin",
            "TRESOR_HOME": home.path, "TRESOR_TIMEOUT": "86400",
        ]
        tresor = binDirectory.appendingPathComponent("tresor").path
        tresord = binDirectory.appendingPathComponent("tresord").path
        log = work.appendingPathComponent("\(name).log").path
    }

    func start() throws {
        daemon = try Child(
            [tresord, "--home", home.path, "--auto-lock", "0", "--log-level", "warning"] + extraArguments, environment: environment, output: log)
        let deadline = Date().addingTimeInterval(20)
        while (try? TresorClient.connect(paths: paths, startDaemon: false).status()) == nil {
            guard Date() < deadline else { throw BenchError("tresord did not answer; see \(log)") }
            usleep(20_000)
        }
    }

    func stop() {
        guard let daemon else { return }
        kill(daemon.pid, SIGTERM)
        daemon.wait()
        self.daemon = nil
    }

    /// Wall time of `body` and the daemon's peak RSS growth during it (`VmHWM` reset first).
    func measure(_ body: () throws -> Void) throws -> [String: Any] {
        if daemon == nil { try start() }
        guard let pid = daemon?.pid else { throw BenchError("no daemon") }
        try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/\(pid)/clear_refs"))
        let before = memory(of: pid).rssKB
        let ms = try timeMs(body)
        let peak = memory(of: pid).hwmKB
        return ["seconds": ms / 1e3, "rss_before_MB": Double(before) / 1024, "rss_growth_MB": Double(peak - before) / 1024]
    }
}
