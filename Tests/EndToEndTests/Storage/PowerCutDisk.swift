import Foundation
import Testing
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A folder on a FUSE disk that keeps only what was synced (Tests/Fixtures/Storage/power_cut_fs.py
/// describes the model): ``cutPower()`` drops everything else, as a power cut would; ``inject(_:)``
/// makes writes or syncs fail with `EIO`, or every change with `EROFS`.
///
/// Needs `/dev/fuse`, Debian's `python3-fusepy` and `fusermount` (root in CI): tests that use it
/// are enabled on ``isAvailable``.
final class PowerCutDisk {
    enum Fault: String {
        /// Every write fails with `EIO`.
        case writeError = "eio-write"
        /// Every fsync fails with `EIO`, and what it was to sync is never durable.
        case syncError = "eio-fsync"
        /// Every change fails with `EROFS`; reads are served.
        case readOnly = "erofs"
    }

    static let python = URL(fileURLWithPath: "/usr/bin/python3")
    static let script = Repository.file("Tests/Fixtures/Storage/power_cut_fs.py")
    static let fusermount = ["/usr/bin/fusermount", "/bin/fusermount"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static let isAvailable: Bool = {
        guard FileManager.default.fileExists(atPath: "/dev/fuse"), fusermount != nil, getuid() == 0 else { return false }
        return (try? Harness.execute(python, ["-B", "-c", "import fusepy"], environment: [:]).result.succeeded) ?? false
    }()

    /// Where the disk is mounted.
    let mountpoint: URL
    private let work: URL
    private let durable: URL
    private var process: Process?
    private var control: FileHandle?
    private var answers: Int32 = -1
    private(set) var cuts = 0

    /// Mounts an empty disk at `mountpoint` (created if missing), keeping its state in `scratch`.
    init(mountpoint: URL, scratch: URL) throws {
        self.mountpoint = mountpoint
        work = scratch.appendingPathComponent("work")
        durable = scratch.appendingPathComponent("durable")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(at: mountpoint, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try mount()
    }

    deinit { unmount() }

    private func mount() throws {
        let process = Process()
        process.executableURL = Self.python
        process.arguments = ["-B", Self.script.path, "mount", work.path, durable.path, mountpoint.path]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        // Its messages go to a file of the disk's own: a FUSE process outliving a crashed test
        // runner must not hold the runner's standard error (swift test would wait for it).
        let messages = work.deletingLastPathComponent().appendingPathComponent("fuse.log")
        _ = FileManager.default.createFile(atPath: messages.path, contents: nil)  // a failure shows as the handle's below
        process.standardError = try FileHandle(forWritingTo: messages)
        try process.run()
        self.process = process
        control = input.fileHandleForWriting
        answers = output.fileHandleForReading.fileDescriptor
        // The Pipe objects close their descriptors when released: keep the reading end open.
        answers = dup(answers)
        let ready = readLine()
        guard ready == "mounted" else { throw PowerCutDiskError.didNotMount(ready ?? "no answer") }
    }

    private func readLine() -> String? {
        var line = [UInt8]()
        var byte: UInt8 = 0
        while read(answers, &byte, 1) == 1 {
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
        return nil
    }

    /// Turns a fault on or off; it applies to every operation the disk serves from then on.
    /// Turning ``Fault/readOnly`` off also undoes ``remountReadOnly()``.
    func inject(_ fault: Fault, _ on: Bool = true) throws {
        let command = "\(fault.rawValue) \(on ? "on" : "off")"
        if fault == .readOnly && !on && remountedReadOnly { try remount("rw") }
        try control?.write(contentsOf: Data((command + "\n").utf8))
        guard readLine() == "ok \(command)" else { throw PowerCutDiskError.controlFailed(command) }
    }

    private var remountedReadOnly = false

    /// The mount made read-only too (a bind remount), as `mount -o remount,ro` of a home: then
    /// `statvfs` says so. The kernel refuses while a file on it is open for writing (stop the daemon first).
    func remountReadOnly() throws {
        try remount("ro")
        remountedReadOnly = true
    }

    private func remount(_ mode: String) throws {
        let result = try Harness.execute(URL(fileURLWithPath: "/bin/mount"), ["-o", "remount,\(mode),bind", mountpoint.path], environment: [:]).result
        guard result.succeeded else { throw PowerCutDiskError.controlFailed("mount -o remount,\(mode): \(result.stderr)") }
        if mode == "rw" { remountedReadOnly = false }
    }

    /// The power cut: the disk's process is killed, the mount dropped, and the folder comes back
    /// holding only what was synced. Whoever used the disk must have been killed first.
    func cutPower() throws {
        killProcess()
        try rebuild()
        try mount()
        remountedReadOnly = false
        cuts += 1
    }

    private func killProcess() {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilEnded()
        }
        process = nil
        try? control?.close()
        control = nil
        if answers >= 0 { close(answers) }
        answers = -1
        if let fusermount = Self.fusermount {
            _ = try? Harness.execute(URL(fileURLWithPath: fusermount), ["-u", "-z", mountpoint.path], environment: [:])
        }
    }

    private func rebuild() throws {
        let restored = try Harness.execute(Self.python, ["-B", Self.script.path, "restore", work.path, durable.path], environment: [:]).result
        guard restored.succeeded else { throw PowerCutDiskError.restoreFailed(restored.stderr) }
    }

    /// Unmounts, keeping what the disk holds now (not a power cut).
    func unmount() {
        guard process != nil else { return }
        killProcess()
    }
}

enum PowerCutDiskError: Error {
    case didNotMount(String)
    case controlFailed(String)
    case restoreFailed(String)
    case sqliteMissing
}

extension Harness {
    /// Runs sqlite3's `PRAGMA integrity_check` on every database in the home (the keychains, the
    /// notes, a restore's staging), beside the running daemon.
    /// - Returns: how many were checked, and a line for each that did not answer `ok`.
    func checkDatabaseIntegrity() throws -> (checked: Int, failures: [String]) {
        guard let sqlite = CrashDriver.sqlite else { throw PowerCutDiskError.sqliteMissing }
        let enumerator = FileManager.default.enumerator(at: paths.home, includingPropertiesForKeys: nil)
        var checked = 0
        var failures: [String] = []
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "db" else { continue }
            let answer = try run(sqlite, [url.path, "PRAGMA integrity_check;"])
            if answer.stdout != "ok\n" { failures.append("\(url.lastPathComponent): \(answer.stdout)\(answer.stderr)") }
            checked += 1
        }
        return (checked, failures)
    }
}
