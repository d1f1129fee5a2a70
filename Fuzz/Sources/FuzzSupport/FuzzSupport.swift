import CFuzzDriver
import Foundation

#if canImport(Glibc)
import Glibc
#endif

nonisolated(unsafe) private var currentBody: ((Data) -> Void)?

/// Runs libFuzzer on `body`, one call per input, then exits with libFuzzer's status
/// (non-zero after a crash, a timeout or an out-of-memory).
///
/// With `TRESOR_FUZZ_WRITE_SEEDS=<folder>` in the environment it instead writes `seeds()` —
/// inputs the target builds itself because they need its keys (see `scripts/fuzz --seeds`) —
/// into the folder, one file per name, and exits.
public func fuzz(seeds: () throws -> [String: Data] = { [:] }, _ body: @escaping (Data) -> Void) -> Never {
    if let folder = ProcessInfo.processInfo.environment["TRESOR_FUZZ_WRITE_SEEDS"], !folder.isEmpty {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for (name, data) in try seeds() {
                try data.write(to: URL(fileURLWithPath: folder).appendingPathComponent(name))
            }
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("writing the seeds failed: \(error)\n".utf8))
            exit(1)
        }
    }
    currentBody = body
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    let status = LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        let input = size == 0 || data == nil ? Data() : Data(bytes: data!, count: size)
        currentBody!(input)
        return 0
    }
    exit(status)
}

/// Reads a fuzz input front to back: selector bytes first, the payload last. Running out is
/// not an error — missing bytes read as zero — so every input means something.
public struct FuzzInput {
    private var bytes: Data

    public init(_ data: Data) { bytes = Data(data) }

    public var isEmpty: Bool { bytes.isEmpty }

    /// The next byte, or 0 past the end.
    public mutating func byte() -> UInt8 {
        guard let first = bytes.first else { return 0 }
        bytes = bytes.dropFirst()
        return first
    }

    /// Up to `count` next bytes.
    public mutating func take(_ count: Int) -> Data {
        let taken = bytes.prefix(count)
        bytes = bytes.dropFirst(taken.count)
        return Data(taken)
    }

    /// Everything not read yet, as a slice of the original (its indices do not start at 0, on
    /// purpose: parsers must accept slices).
    public var rest: Data { bytes }
}

nonisolated(unsafe) private var scratchFolders: [String] = []

/// A new private folder for one target's files, on tmpfs when there is one (fuzzing writes a
/// file per input), removed when the process exits normally.
public func makeScratchFolder(_ name: String) -> URL {
    let base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : NSTemporaryDirectory()
    var template = Array("\(base)/tresor-fuzz-\(name)-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("mkdtemp failed (errno \(errno))") }
    let path = String(cString: made)
    if scratchFolders.isEmpty {
        atexit {
            for folder in scratchFolders { try? FileManager.default.removeItem(atPath: folder) }
        }
    }
    scratchFolders.append(path)
    return URL(fileURLWithPath: path)
}

/// Writes `data` to `url` with mode 0600 (no fsync: fuzzing writes thousands a second).
public func writeFile(_ data: Data, to url: URL) {
    let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { fatalError("cannot write \(url.path) (errno \(errno))") }
    defer { close(fd) }
    data.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let written = write(fd, raw.baseAddress! + offset, raw.count - offset)
            guard written > 0 else { fatalError("cannot write \(url.path) (errno \(errno))") }
            offset += written
        }
    }
}

/// Stops the process the way libFuzzer records as a crash, with a message saying which
/// property of the code under test the input broke.
public func fuzzFailure(_ message: String, file: StaticString = #file, line: UInt = #line) -> Never {
    fatalError("fuzz property violated: \(message)", file: file, line: line)
}
