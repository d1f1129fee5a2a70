import Crypto
import Foundation
import TresorCrypto
import TresorKeybag
import TresorKit
import TresorNotes

#if canImport(Glibc)
import Glibc
#endif

/// Notes scenarios, in-process on a temporary home (Keybag.create + NotesStore with
/// NotesSettings.production, i.e. 600,000 PBKDF2 rounds).
struct NotesBench {
    let smoke: Bool
    let noteCount: Int
    let totalBytes: Int

    static let mebi = 1 << 20

    func run() throws -> [String: Any] {
        var result: [String: Any] = [:]

        // Raw chunk sealing with glibc's default malloc thresholds first (the lever's evidence),
        // then tuned like the daemon for every other figure.
        result["chunk_crypto_default_malloc"] = try chunkCrypto(sizes: [64 * Self.mebi], label: "default malloc")
        tuneAllocatorLikeTheDaemon()
        result["chunk_crypto"] = try chunkCrypto(sizes: [1024, Self.mebi, 64 * Self.mebi], label: "tuned malloc")

        let work = try makeTemporaryFolder("tresor-bench-notes")
        defer { try? FileManager.default.removeItem(at: work) }
        let paths = TresorPaths(home: work.appendingPathComponent("home").path, environment: ["XDG_RUNTIME_DIR": work.path, "HOME": work.path])
        let keybag = try Keybag.create(paths: paths, passcode: nil)
        let store = try NotesStore(paths: paths, keybag: keybag, settings: .production)
        let passphrase = try Passphrase("correct horse notes")
        result["kdf_rounds"] = NotesSettings.production.kdfRounds

        // Unlock cost: one KDF run (PBKDF2-HMAC-SHA256, 600,000 rounds, 16-byte output).
        var kdf: [Double] = []
        for _ in 0..<(smoke ? 1 : 3) {
            let salt = SecureRandom.bytes(count: LockedNoteCrypto.saltByteCount)
            kdf.append(try timeMs { _ = try LockedNoteCrypto.passphraseKey(passphrase, salt: salt, iterations: NotesSettings.production.kdfRounds) })
        }
        result["kdf"] = summary(kdf)
        result["set_passphrase_ms"] = try timeMs { try store.setPassphrase(passphrase) }
        _ = store.lockNow()
        result["open_session_ms"] = try timeMs { try store.openCurrentSession(with: passphrase) }

        result["two_layer_crypto"] = try twoLayerCrypto()
        result["durable_write"] = try durableWrite(in: work)
        result["attachments"] = try attachments(store)
        result["open_locked_note_1MB"] = try openLockedNote(store)
        result["passphrase_change"] = try passphraseChange(store, passphrase: passphrase, home: paths.home, kdfMs: kdf.min()!)
        result["list_notes"] = try listNotes(store)
        return result
    }

    /// LockedNoteCrypto.sealChunk / openChunk (AES-128-GCM, 1 MiB chunks) over `size` bytes.
    func chunkCrypto(sizes: [Int], label: String) throws -> [[String: Any]] {
        let key = LockedNoteCrypto.newNoteKey()
        var results: [[String: Any]] = []
        for size in sizes {
            let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let reps = repetitions(size)
            var sealed: [Data] = []
            var best = Double.infinity
            for _ in 0..<reps {
                var chunks: [Data] = []
                let ms = try timeMs {
                    var offset = 0, index: UInt64 = 0
                    repeat {
                        let end = min(offset + Self.mebi, size)
                        chunks.append(
                            try LockedNoteCrypto.sealChunk(data[offset..<end], with: key, attachmentID: "a", index: index, isFinal: end == size))
                        offset = end; index += 1
                    } while offset < size
                }
                best = min(best, ms)
                sealed = chunks
            }
            var bestOpen = Double.infinity
            for _ in 0..<reps {
                let ms = try timeMs {
                    for (i, chunk) in sealed.enumerated() {
                        _ = try LockedNoteCrypto.openChunk(chunk, with: key, attachmentID: "a", index: UInt64(i), isFinal: i == sealed.count - 1)
                    }
                }
                bestOpen = min(bestOpen, ms)
            }
            results.append([
                "bytes": size, "repetitions": reps,
                "seal_MBps": Double(size) / 1e6 / (best / 1e3), "open_MBps": Double(size) / 1e6 / (bestOpen / 1e3),
            ])
            log("chunk crypto (\(label)) \(size) B: seal \(Int(Double(size) / 1e3 / best)) MB/s")
        }
        return results
    }

    /// Both layers of a locked attachment in memory, no file: sealChunk under the note key, then
    /// the keybag layer's envelope (Envelope.sealParts, as AttachmentFile writes it), per 1 MiB.
    func twoLayerCrypto() throws -> [String: Any] {
        let size = 64 * Self.mebi
        let noteKey = LockedNoteCrypto.newNoteKey(), contentKey = SecureRandom.key(bitCount: 128)
        let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 11) })
        var best = Double.infinity
        for _ in 0..<repetitions(size) {
            best = min(
                best,
                try timeMs {
                    var offset = 0, index: UInt64 = 0
                    repeat {
                        let end = min(offset + Self.mebi, size)
                        let inner = try LockedNoteCrypto.sealChunk(
                            data[offset..<end], with: noteKey, attachmentID: "a", index: index, isFinal: end == size)
                        _ = try Envelope.sealParts(inner, using: contentKey, authenticating: Data("a/\(index)".utf8))
                        offset = end; index += 1
                    } while offset < size
                })
        }
        log("two-layer crypto 64 MiB in memory: \(Int(Double(size) / 1e3 / best)) MB/s")
        return ["bytes": size, "seal_MBps": Double(size) / 1e6 / (best / 1e3)]
    }

    /// 64 MiB written to a new file in the bench's folder (same disk as the home) in 1 MiB
    /// writes, then one fsync, no crypto: what the disk itself allows a store path that must be
    /// durable before it returns. Twice: plain, and with each MiB's writeback started at once
    /// (sync_file_range, as SecureFiles.NewFile does), the better the disk can do.
    func durableWrite(in folder: URL) throws -> [String: Any] {
        typealias SyncFileRange = @convention(c) (Int32, Int64, Int64, UInt32) -> Int32
        let syncFileRange = dlsym(nil, "sync_file_range").map { unsafeBitCast($0, to: SyncFileRange.self) }
        let size = 64 * Self.mebi
        let block = Data((0..<Self.mebi).map { UInt8(truncatingIfNeeded: $0 &* 5) })
        var result: [String: Any] = ["bytes": size]
        for startWriteback in [false, true] {
            var best = Double.infinity
            for repetition in 0..<repetitions(size) {
                let path = folder.appendingPathComponent("durable-\(repetition)").path
                best = min(
                    best,
                    try timeMs {
                        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                        guard fd >= 0 else { throw BenchError("open \(path)") }
                        defer { close(fd) }
                        for i in 0..<(size / Self.mebi) {
                            guard block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == block.count else { throw BenchError("write") }
                            if startWriteback { _ = syncFileRange?(fd, Int64(i * Self.mebi), Int64(Self.mebi), 2) }
                        }
                        guard fsync(fd) == 0 else { throw BenchError("fsync") }
                    })
                unlink(path)
            }
            let label = startWriteback ? "writeback per MiB" : "plain"
            log("durable write 64 MiB (write + fsync, no crypto, \(label)): \(Int(Double(size) / 1e3 / best)) MB/s")
            result[startWriteback ? "writeback_per_MiB_MBps" : "MBps"] = Double(size) / 1e6 / (best / 1e3)
        }
        return result
    }

    func repetitions(_ size: Int) -> Int {
        if smoke { return size >= 64 * Self.mebi ? 1 : 5 }
        return size <= 1024 ? 2000 : (size <= Self.mebi ? 50 : 5)
    }

    /// NotesStore.addAttachment / attachment(_:of:) on a locked note inside its session: the
    /// keybag layer, the note key's AES-128-GCM, the file write and read.
    func attachments(_ store: NotesStore) throws -> [[String: Any]] {
        let note = try store.createNote(NoteDraft(title: "attachments", body: "holder"))
        try store.lockNote(note.id)
        var results: [[String: Any]] = []
        for size in [1024, Self.mebi, 64 * Self.mebi] {
            let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            let reps = min(repetitions(size), smoke ? 5 : 200)
            var add: [Double] = [], read: [Double] = []
            for _ in 0..<reps {
                var info: AttachmentInfo?
                add.append(try timeMs { info = try store.addAttachment(to: note.id, kind: .image, name: "a.png", data: data) })
                read.append(try timeMs { _ = try store.attachment(info!.id, of: note.id) })
                try store.removeAttachment(info!.id, of: note.id, by: .keyHolder)
            }
            results.append([
                "bytes": size, "repetitions": reps,
                "add_MBps": Double(size) / 1e6 / (add.min()! / 1e3), "read_MBps": Double(size) / 1e6 / (read.min()! / 1e3),
                "add": summary(add), "read": summary(read),
            ])
            log("store attachment \(size) B: add \(Int(Double(size) / 1e3 / add.min()!)) MB/s, read \(Int(Double(size) / 1e3 / read.min()!)) MB/s")
        }
        return results
    }

    /// A locked note with a 1 MB body, opened repeatedly inside the open session.
    func openLockedNote(_ store: NotesStore) throws -> [String: Any] {
        let body = String(repeating: "0123456789abcdef", count: 1_000_000 / 16)
        let note = try store.createNote(NoteDraft(title: "big", body: body))
        try store.lockNote(note.id)
        var samples: [Double] = []
        for _ in 0..<(smoke ? 5 : 100) {
            samples.append(
                try timeMs {
                    guard try store.openNote(note.id).body.utf8.count == body.utf8.count else { throw BenchError("wrong body") }
                })
        }
        var result = summary(samples)
        result["body_bytes"] = body.utf8.count
        return result
    }

    /// `noteCount` locked notes holding `totalBytes` of attachments in all, then one
    /// changePassphrase (which re-wraps every note key).
    func passphraseChange(_ store: NotesStore, passphrase: Passphrase, home: URL, kdfMs: Double) throws -> [String: Any] {
        let perNote = totalBytes / noteCount
        let data = Data((0..<perNote).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        log("notes: creating \(noteCount) locked notes with \(perNote) B each")
        let start = nowNanos()
        for i in 0..<noteCount {
            let note = try store.createNote(NoteDraft(title: "n\(i)", body: "note \(i)"))
            try store.lockNote(note.id)
            try store.addAttachment(to: note.id, kind: .image, name: "p.png", data: data)
            if i % 1000 == 999 { log("  \(i + 1) notes") }
        }
        let fillSeconds = Double(nowNanos() - start) / 1e9
        let newPassphrase = try Passphrase("battery staple notes")
        var progressCalls = 0
        let ms = try timeMs { try store.changePassphrase(from: passphrase, to: newPassphrase) { _, _ in progressCalls += 1 } }
        log("notes: passphrase change over \(noteCount) notes: \(Int(ms)) ms (KDF \(Int(kdfMs)) ms)")
        return [
            "notes": noteCount, "attachment_bytes_total": perNote * noteCount, "home_bytes": treeSize(home),
            "fill_seconds": fillSeconds, "change_ms": ms, "kdf_ms": kdfMs,
            "target_ms": kdfMs + 1000, "ratio_to_target": ms / (kdfMs + 1000),
        ]
    }

    /// Listing every note (`tresor note list`, the web client's sidebar) over the store the
    /// passphrase change left: `noteCount` locked notes with an attachment each, plus a tenth as
    /// many plain notes with 4 KB bodies in ten folders.
    func listNotes(_ store: NotesStore) throws -> [String: Any] {
        let body = String(repeating: "a plain note body ", count: 4096 / 18)
        for i in 0..<(noteCount / 10) {
            _ = try store.createNote(NoteDraft(title: "plain \(i)", body: body, folder: "folder \(i % 10)"))
        }
        var count = 0
        var samples: [Double] = []
        for _ in 0..<(smoke ? 2 : 5) {
            samples.append(try timeMs { count = try store.notes().count })
        }
        log("notes: listing \(count) notes: \(Int(samples.min()!)) ms")
        var result = summary(samples)
        result["notes"] = count
        return result
    }
}
