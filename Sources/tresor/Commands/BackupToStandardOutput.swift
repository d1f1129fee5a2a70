import ArgumentParser
import FoundationEssentials
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// `tresor backup create --out -`: the daemon writes files, not pipes, so the backup is written
/// to a private folder (mode 0700) in the temporary files' folder on disk — `$TMPDIR`, else
/// `/var/tmp`, else `/tmp`; never the home, which a backup may not be written into — then copied
/// to standard output and removed, whatever the copy's end: a reader that goes away (`| head`) is
/// an error, never a backup left behind. The file is age-encrypted, like any backup.
struct BackupToStandardOutput {
    /// The folder the daemon writes into.
    let folder: String
    /// The backup file in it.
    var path: String { folder + "/backup.age" }

    /// Makes the folder, refusing a terminal: an age file is binary.
    /// - Throws: `ValidationError` when standard output is a terminal or no folder can be made.
    init() throws {
        guard !StandardStream.output.isTerminal else {
            throw ValidationError("standard output is a terminal: send it on (`--out - | ssh HOST 'cat > tresor.backup'`) or give a file")
        }
        guard let made = PrivateFolder.make("tresor-backup", inFirstOf: [ProcessInfo.processInfo.environment["TMPDIR"], "/var/tmp", "/tmp"]) else {
            throw ValidationError("no folder to write the backup in before it goes to standard output (set TMPDIR)")
        }
        folder = made
        // A reader gone must be an error this process sees, not a signal that ends it before
        // it removes the folder.
        signal(SIGPIPE, SIG_IGN)
    }

    /// Copies the backup to standard output.
    /// - Throws: ``TresorSystem/SecureFileError`` when it cannot be read or standard output is closed.
    func copy() throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SecureFileError.systemCall("open", path: path, errno: errno) }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw SecureFileError.systemCall("read", path: path, errno: errno) }
            if count == 0 { return }
            if let code = Data(buffer[0..<count]).write(toDescriptor: StandardStream.output.rawValue) {
                throw SecureFileError.systemCall("write", path: "standard output", errno: code)
            }
        }
    }

    /// Removes the folder and what is in it.
    func remove() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] { unlink(folder + "/" + name) }
        rmdir(folder)
    }
}
