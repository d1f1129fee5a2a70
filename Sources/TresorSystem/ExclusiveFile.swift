import CTresorSystem
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// A new file written piece by piece: created with mode 0600 only if nothing is at its path,
/// appended to in order, then either committed (fsynced once) or abandoned (removed).
///
/// Each piece goes to the disk's writeback as soon as it is appended, so the disk works while
/// the writer prepares the next piece — a large sealed attachment is never held whole in memory,
/// and the commit's fsync waits only for the tail. A file dropped without a commit is abandoned,
/// so an interrupted write (an error, a client that went away) leaves nothing behind.
public final class ExclusiveFile {
    public let path: String
    /// The open descriptor; -1 once committed or abandoned.
    private var fd: Int32
    /// Bytes written so far.
    public private(set) var size = 0
    /// Where the bytes not yet handed to writeback begin.
    private var writebackStart = 0

    /// The bytes kept at the start for ``writePrefix(_:)``.
    private let prefixByteCount: Int
    /// Where ``commit(syncingFolder:)`` moves this file written under a temporary name
    /// (``init(replacing:)``, ``init(creatingOnCommit:)``), and whether it may replace a file there.
    private let destination: (path: String, replacing: Bool)?

    /// Creates the file at `url`; fails if anything (a file, a link) is already there.
    /// - Parameters:
    ///   - url: where.
    ///   - prefix: bytes kept at the start, written last by ``writePrefix(_:)`` (a header known
    ///     only once the rest is written); appending starts after them.
    /// - Throws: ``SecureFileError`` when it cannot be created.
    public init(creating url: URL, reservingPrefix prefix: Int = 0) throws {
        path = url.path
        prefixByteCount = prefix
        destination = nil
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SecureFileError.systemCall("create", path: path, errno: errno) }
        if prefix > 0 {
            guard lseek(fd, off_t(prefix), SEEK_SET) == off_t(prefix) else {
                let code = errno
                abandon()
                throw SecureFileError.systemCall("seek", path: path, errno: code)
            }
            size = prefix
            writebackStart = prefix
        }
    }

    /// Creates a file that replaces `url` once committed: written beside it under a temporary
    /// name (``SecureFiles/writeAtomically(_:to:)``'s) and renamed over it by
    /// ``commit(syncingFolder:)``. Abandoned, it leaves whatever is at `url` as it was.
    /// - Parameter url: the file to replace (or to create, when nothing is there).
    /// - Throws: ``SecureFileError`` when the temporary file cannot be created.
    public convenience init(replacing url: URL) throws {
        try self.init(temporaryFor: url, replacing: true)
    }

    /// Creates a file that appears at `url` only once committed, whole: written beside it under
    /// a temporary name (``SecureFiles/writeAtomically(_:to:)``'s) and moved to `url` by
    /// ``commit(syncingFolder:)`` only if nothing is there by then. Abandoned — or its process
    /// killed part way — nothing is at `url` (a kill leaves the temporary file beside it).
    /// - Parameter url: where the file appears.
    /// - Throws: ``SecureFileError`` when the temporary file cannot be created.
    public convenience init(creatingOnCommit url: URL) throws {
        try self.init(temporaryFor: url, replacing: false)
    }

    private init(temporaryFor url: URL, replacing: Bool) throws {
        path = SecureFiles.temporaryPath(replacing: url)
        prefixByteCount = 0
        destination = (url.path, replacing)
        unlink(path)  // left by an interrupted write of an earlier process with this pid
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw SecureFileError.systemCall("create", path: path, errno: errno) }
    }

    /// Fills the prefix kept at creation. On failure the file is abandoned.
    /// - Parameter bytes: exactly as many bytes as were kept.
    /// - Throws: ``SecureFileError`` when it cannot be written.
    public func writePrefix(_ bytes: Data) throws {
        precondition(bytes.count == prefixByteCount, "ExclusiveFile.writePrefix: \(bytes.count) bytes for a \(prefixByteCount)-byte prefix")
        guard fd >= 0 else { throw SecureFileError.systemCall("write", path: path, errno: EBADF) }
        if let code = bytes.write(toDescriptor: fd, at: 0) {
            abandon()
            throw SecureFileError.systemCall("write", path: path, errno: code)
        }
    }

    deinit { abandon() }

    /// Writes `bytes` at the end of the file and starts their writeback. On failure the file is
    /// abandoned: a file with a hole in it is worth nothing.
    public func append(_ bytes: Data) throws {
        guard fd >= 0 else { throw SecureFileError.systemCall("write", path: path, errno: EBADF) }
        do {
            try SecureFiles.writeAll(bytes, to: fd, path: path)
        } catch {
            abandon()
            throw error
        }
        size += bytes.count
        // Only a hint: durability comes from the fsync of `commit()`. Handed over in large
        // ranges: each call submits its pages to the disk from this thread, and on a virtual
        // disk each submission is costly (BENCHMARKS.md, "Measured design choices").
        if size - writebackStart >= Self.writebackBatch, let startWriteback = Self.syncFileRange {
            _ = startWriteback(fd, Int64(writebackStart), Int64(size - writebackStart), Self.syncFileRangeWrite)
            writebackStart = size
        }
    }

    /// How many bytes are handed to writeback at once.
    static let writebackBatch = 8 << 20

    /// Makes the file durable — its content (fsync) and its name (fsync of its folder, which a
    /// new file needs too) — and closes it; one made by ``init(replacing:)`` is first renamed
    /// over the file it replaces, one made by ``init(creatingOnCommit:)`` moved to its name if
    /// nothing is there (else `EEXIST`). If a sync or the move fails the file is removed.
    /// - Parameter syncingFolder: false when the caller syncs the folder itself once, after many
    ///   files (a restore's staged attachments).
    /// - Throws: ``SecureFileError`` when a sync fails.
    public func commit(syncingFolder: Bool = true) throws {
        guard fd >= 0 else { throw SecureFileError.systemCall("fsync", path: path, errno: EBADF) }
        guard fsync(fd) == 0 else {
            let code = errno
            abandon()
            throw SecureFileError.systemCall("fsync", path: path, errno: code)
        }
        if let destination {
            let moved = destination.replacing ? rename(path, destination.path) : tresor_rename_no_replace(path, destination.path)
            guard moved == 0 else {
                let code = errno
                abandon()
                throw SecureFileError.systemCall("rename", path: destination.path, errno: code)
            }
        }
        do {
            if syncingFolder { try SecureFiles.syncDirectory(URL(fileURLWithPath: path).deletingLastPathComponent()) }
        } catch {
            abandon()
            throw error
        }
        close(fd)
        fd = -1
    }

    /// Closes and removes the file, unless it was committed. Safe to call more than once.
    public func abandon() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
        unlink(path)
    }

    private static let syncFileRangeWrite: UInt32 = 2  // SYNC_FILE_RANGE_WRITE
    /// glibc's `sync_file_range`, which Swift's Glibc module does not declare (it is a GNU
    /// extension); looked up once. Nil where it does not exist, then only the fsync writes.
    private static let syncFileRange: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32)? = {
        guard let symbol = dlsym(nil, "sync_file_range") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self)
    }()
}
