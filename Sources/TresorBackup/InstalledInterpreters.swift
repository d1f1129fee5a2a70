import Foundation
import TresorCrypto
import TresorModel

/// The interpreters installed on this machine (``TresorModel/Interpreter``), known by their
/// files' SHA-256: an application record names its executable by hash, and its path is only
/// what the backup says — a renamed copy of python is still python.
struct InstalledInterpreters {
    /// The hashes of the interpreters found in ``TresorModel/Interpreter/folders``.
    let hashes: Set<Data>

    /// Hashes every interpreter found (each file once, symbolic links followed).
    init() {
        var files: Set<String> = []
        for folder in Interpreter.folders {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names where Interpreter.isInterpreter(path: name) {
                files.insert(URL(fileURLWithPath: folder).appendingPathComponent(name).resolvingSymlinksInPath().path)
            }
        }
        var hashes: Set<Data> = []
        for file in files {
            let fd = open(file, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, let hash = try? Digest.sha256(readingFileDescriptor: fd) else { continue }
            hashes.insert(hash)
        }
        self.hashes = hashes
    }

    /// Whether `application`'s executable is an interpreter: by the name it was registered
    /// under, or by its hash.
    /// - Parameter application: an application of a backup.
    /// - Returns: whether it runs code of anyone's choosing.
    func isInterpreter(_ application: Application) -> Bool {
        Interpreter.isInterpreter(path: application.executablePath) || hashes.contains(application.executableSHA256)
    }
}
