import Crypto
import Foundation
import GRDB
import Testing
import TresorCrypto
import TresorKit
import TresorNotes
import TresorProtocol
import TresorSystem
import TresorTestSupport

@testable import TresorKeybag

/// docs/SECURITY.md §3.9: after a lock, the daemon's memory no longer holds the keys that need
/// the keybag unlocked, and at no time the PBKDF2 output of a passcode. Reads `/proc/<pid>/mem`
/// of the daemon, so it needs root.
@Suite(.blocksItsThread, .serialized) struct MemoryHygieneTests {
    static var isRoot: Bool { getuid() == 0 }

    /// No auto-lock and no idle end of a secure session while a test runs: under a loaded CI
    /// one of these tests took 12 minutes, and a timer that locked first would make its positive
    /// control fail (or pass a check for the wrong reason).
    static let noTimers = ["--auto-lock", "0", "--notes-session-idle", "86400"]

    /// Whether `needle` occurs in any readable, writable mapping of process `pid`.
    static func memory(of pid: Int32, contains needle: Data) throws -> Bool {
        try occurrence(in: pid, of: needle) != nil
    }

    /// Where a copy of `text` of the process's own is, as ``occurrence(in:of:ignoring:)``
    /// says, or nil. Its bytes after the first 16 are looked for: a freed block's first 16 bytes
    /// are where the allocator writes its list pointers, so a copy freed unzeroed is found with
    /// its head overwritten. A string inside JSON text, as a request arrived — after a `"` and
    /// the head, or before a `"` — does not count.
    static func copy(in pid: Int32, of text: String) throws -> String? {
        let bytes = Data(text.utf8)
        precondition(bytes.count >= 32, "a text to look for needs 16 bytes after its head")
        let opening = Data("\"".utf8) + bytes.prefix(16), closing = UInt8(ascii: "\"")
        return try occurrence(in: pid, of: Data(bytes.dropFirst(16))) { window, found in
            let start = found.lowerBound - opening.count
            return (start >= window.startIndex && window[start..<found.lowerBound] == opening)
                || (found.upperBound < window.endIndex && window[found.upperBound] == closing)
        }
    }

    /// Where `needle` first occurs in process `pid`'s readable, writable mappings: the
    /// mapping's line of `/proc/<pid>/maps` and the 32 bytes before the occurrence and the
    /// 8 after it in hex (what holds it: a freed block's header, a `String`'s), or nil.
    /// - Parameter ignoring: whether an occurrence (its range in the bytes read around it)
    ///   does not count.
    static func occurrence(
        in pid: Int32, of needle: Data, ignoring: (Data, Range<Data.Index>) -> Bool = { _, _ in false }
    ) throws -> String? {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        let mem = open("/proc/\(pid)/mem", O_RDONLY)
        guard mem >= 0 else { throw HarnessError.daemonDidNotStart("cannot open /proc/\(pid)/mem (errno \(errno))") }
        defer { close(mem) }
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("rw") else { continue }
            let range = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard range.count == 2 else { continue }
            var offset = range[0]
            let chunk = 1 << 20
            // The end of the chunk before, so that an occurrence across two chunks (and the byte
            // before one at a chunk's start) is seen.
            var carry = Data()
            while offset < range[1] {
                let size = Int(min(UInt64(chunk), range[1] - offset))
                var buffer = Data(count: size)
                let read = buffer.withUnsafeMutableBytes { pread(mem, $0.baseAddress, size, off_t(Int64(bitPattern: offset))) }
                guard read > 0 else { break }
                let window = carry + buffer.prefix(read)
                var from = window.startIndex
                while let found = firstRange(of: needle, in: window, from: from) {
                    if !ignoring(window, found) {
                        let before = window[max(window.startIndex, found.lowerBound - 32)..<found.lowerBound]
                        let after = window[found.upperBound..<min(window.endIndex, found.upperBound + 8)]
                        let hex = { (bytes: Data) in bytes.map { String(format: "%02x", $0) }.joined() }
                        return "in \(line): after \(hex(before)), before \(hex(after))"
                    }
                    from = found.lowerBound + 1
                }
                carry = Data(window.suffix(needle.count + 32))
                offset += UInt64(read)
            }
        }
        return nil
    }

    /// Where `needle` first occurs in `window` at or after `from`: each place holding its first
    /// byte found with `memchr`, the rest compared with `memcmp` — a daemon's hundreds of megabytes
    /// go far sooner than through `Data.range(of:in:)` (the scans were a long test's largest cost).
    static func firstRange(of needle: Data, in window: Data, from: Data.Index) -> Range<Data.Index>? {
        guard let first = needle.first else { return nil }
        return window.withUnsafeBytes { haystack -> Range<Data.Index>? in
            needle.withUnsafeBytes { wanted -> Range<Data.Index>? in
                guard let base = haystack.baseAddress, let wantedBase = wanted.baseAddress else { return nil }
                var at = from - window.startIndex
                while haystack.count - at >= wanted.count {
                    guard let hit = memchr(base + at, Int32(first), haystack.count - at - wanted.count + 1) else { return nil }
                    let offset = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(base + offset, wantedBase, wanted.count) == 0 {
                        let lower = window.startIndex + offset
                        return lower..<lower + needle.count
                    }
                    at = offset + 1
                }
                return nil
            }
        }
    }

    @Test(.enabled(if: isRoot, "reading another process's memory needs root"))
    func aLockDropsTheWhenUnlockedKeysFromTheDaemonsMemory() throws {
        let harness = try Harness()
        let passcode = "e2e-memory-passcode"
        harness.secrets = [passcode]
        try harness.startDaemon(extraArguments: Self.noTimers)
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
        #expect(
            try harness.tresor(["item", "add", "--service", "mem", "--readable-by-scripts", "--secret-stdin"], input: "in-memory-secret\n").succeeded)
        #expect(try harness.tresor(["item", "get", "--service", "mem"]).stdout == "in-memory-secret")

        // The keys, as this test process derives them from the same files and passcode: every
        // class key that needs the keybag unlocked, and the metadata key of the item's class
        // (generic passwords, `whenUnlocked`), which the daemon keeps once it has read the item.
        let keybag = try Keybag.open(paths: harness.paths)
        try keybag.unlock(passcode: try Passcode(passcode))
        func bytes(_ key: SymmetricKey) -> Data { key.withUnsafeBytes { Data($0) } }
        let lockedAway: [ProtectionClass] = [.whenUnlocked, .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly]
        var keys = try lockedAway.map { ("the \($0.rawValue) class key", bytes(try keybag.classKey(for: $0))) }
        let wrapped = try DatabaseQueue(path: harness.paths.loginKeychain.path).read { db in
            try Data.fetchOne(db, sql: "SELECT wrapped_key FROM metadata_keys WHERE item_class = 'genp' AND pdmn = 'whenUnlocked'")
        }
        let metadataKey = try KeyWrap.unwrap(try #require(wrapped), using: try keybag.classKey(for: .whenUnlocked))
        keys.append(("the generic passwords' whenUnlocked metadata key", bytes(metadataKey)))
        let afterFirstUnlockKey = bytes(try keybag.classKey(for: .afterFirstUnlock))

        let pid = try harness.status().pid
        // Positive control: while unlocked the daemon holds every one, so the scan can see them.
        for (name, key) in keys + [("the afterFirstUnlock class key", afterFirstUnlockKey)] {
            #expect(try Self.memory(of: pid, contains: key), "the scan must find \(name) while the keybag is unlocked")
        }

        #expect(try harness.tresor(["lock"]).succeeded)
        for (name, key) in keys {
            #expect(!(try Self.memory(of: pid, contains: key)), "\(name) stayed in the daemon's memory after lock")
        }
        // afterFirstUnlock keys stay by design.
        #expect(try Self.memory(of: pid, contains: afterFirstUnlockKey))
    }
}

extension MemoryHygieneTests {
    /// A passcode and its PBKDF2 output are needed only inside an unlock or a change: the daemon
    /// keeps no PBKDF2 output — not the current passcode's, not the one before a change, not a
    /// wrong one's (counted by an HMAC of it) — neither while unlocked nor after a lock, and
    /// after the lock no copy of a passcode's text of its own. Each key is searched for by its
    /// halves, so that a freed buffer whose first bytes the allocator reused is still found.
    @Test(.enabled(if: isRoot, "reading another process's memory needs root"))
    func theDaemonKeepsNoPasscodeNorItsPBKDF2Output() throws {
        let harness = try Harness()
        let (old, new, wrong) = (
            "e2e-kdf-old-passcode-looked-for-past-its-head", "e2e-kdf-new-passcode-looked-for-past-its-head",
            "e2e-kdf-wrong-passcode-looked-for-past-its-head"
        )
        harness.secrets = [old, new, wrong]
        try harness.startDaemon(extraArguments: Self.noTimers)
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: old + "\n").succeeded)
        let oldParameters = try #require(try Keybag.open(paths: harness.paths).state.withLock { $0.record.passcode })
        #expect(try harness.tresor(["lock"]).succeeded)
        #expect(!(try harness.tresor(["unlock", "--passcode-stdin"], input: wrong + "\n").succeeded))
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: old + "\n").succeeded)
        #expect(try harness.tresor(["passcode", "change", "--passcode-stdin"], input: "\(old)\n\(new)\n\(new)\n").succeeded)
        #expect(try harness.tresor(["lock"]).succeeded)
        #expect(try harness.tresor(["unlock", "--passcode-stdin"], input: new + "\n").succeeded)

        let keybag = try Keybag.open(paths: harness.paths)
        let newParameters = try #require(keybag.state.withLock { $0.record.passcode })
        func halves(_ passcode: String, _ parameters: PBKDF2Parameters) throws -> [Data] {
            let key = try PBKDF2.deriveKey(from: Data(passcode.utf8), parameters: parameters).withUnsafeBytes { Data($0) }
            return [key.prefix(16), key.suffix(16)]
        }
        let keys = [
            ("the first passcode's key", try halves(old, oldParameters)),
            ("the passcode's key", try halves(new, newParameters)),
            ("the wrong passcode's key", try halves(wrong, oldParameters)),
        ]
        let pid = try harness.status().pid
        // Positive control: half of a key the daemon does hold is found.
        try keybag.unlock(passcode: try Passcode(new))
        let classKey = try keybag.classKey(for: .whenUnlocked).withUnsafeBytes { Data($0) }
        #expect(try Self.memory(of: pid, contains: classKey.suffix(16)), "the scan must find half of a class key the daemon holds")

        for state in ["unlocked", "locked"] {
            if state == "locked" { #expect(try harness.tresor(["lock"]).succeeded) }
            for (name, halves) in keys {
                for half in halves {
                    #expect(!(try Self.memory(of: pid, contains: half)), "half of \(name) is in the daemon's memory, \(state)")
                }
            }
            // The passcodes' text: none of the daemon's own copies is left — the `String` each
            // request was decoded into (zeroed as it is taken: `TypedSecret.taking`), the
            // `Passcode` it became, the jobs that derived keys from it. What NIO read, the
            // requests as they came (JSON text in buffers it frees without zeroing,
            // docs/SECURITY.md §4.11), is not counted. Where a copy is, is printed.
            for (name, text) in [("the first passcode", old), ("the passcode", new), ("the wrong passcode", wrong)] {
                let left = try Self.copy(in: pid, of: text)
                #expect(left == nil, "\(name)'s text is in the daemon's memory, \(state), \(left ?? "")")
            }
        }
    }

    /// A backup's passphrase leaves no copy of the daemon's own once the backup is made,
    /// verified and rehearsed: the string each request was decoded into is zeroed as it is
    /// taken, and the age format's scrypt reads it where the `SecretText` keeps it. What NIO
    /// read, the requests as they came, is not counted (docs/SECURITY.md §4.11).
    @Test(.enabled(if: isRoot, "reading another process's memory needs root"))
    func aBackupLeavesNoCopyOfItsPassphrase() throws {
        let harness = try Harness()
        let (passcode, passphrase) = ("e2e-backup-memory-passcode", "e2e-backup-memory-passphrase-of-the-file")
        harness.secrets = [passcode, passphrase]
        try harness.startDaemon(extraArguments: Self.noTimers)
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
        #expect(try harness.tresor(["item", "add", "--service", "memory", "--account", "a", "--secret-stdin"], input: "s\n").succeeded)
        let file = harness.root.appendingPathComponent("memory.tresor-backup").path
        #expect(
            try harness.tresor(
                ["backup", "create", "--out", file, "--work-factor", "14", "--passcode-stdin"],
                input: "\(passcode)\n\(passphrase)\n\(passphrase)\n"
            ).succeeded)
        #expect(try harness.tresor(["backup", "verify", file, "--passphrase-stdin"], input: passphrase + "\n").succeeded)
        #expect(
            try harness.tresor(["backup", "restore", file, "--dry-run", "--passcode-stdin"], input: "\(passcode)\n\(passphrase)\n")
                .succeeded)
        let left = try Self.copy(in: try harness.status().pid, of: passphrase)
        #expect(left == nil, "the backup passphrase's text is in the daemon's memory, \(left ?? "")")
    }
}

/// docs/SECURITY.md §3.9: after Lock Now, the daemon's memory no longer holds a secure session's passphrase
/// key, nor the note key it unwrapped, nor a copy of the passphrase of its own.
@Suite(.blocksItsThread, .serialized) struct NoteKeyMemoryHygieneTests {
    @Test(.enabled(if: MemoryHygieneTests.isRoot, "reading another process's memory needs root"))
    func lockNowDropsTheSessionsKeysFromTheDaemonsMemory() throws {
        let harness = try Harness()
        let passcode = "e2e-memory-notes-passcode", passphrase = "e2e-memory-notes-passphrase-looked-for-past-its-head"
        harness.secrets = [passcode, passphrase]
        try harness.startDaemon(extraArguments: MemoryHygieneTests.noTimers)
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: passcode + "\n").succeeded)
        #expect(try harness.tresor(["note", "passphrase", "set", "--passphrase-stdin"], input: "\(passphrase)\n\(passphrase)\n").succeeded)
        let note = try harness.json(NoteSummary.self, ["note", "new", "--title", "memory", "--body-stdin"], input: "kept in memory?")
        #expect(try harness.tresor(["note", "lock", note.id]).succeeded)
        #expect(try harness.tresor(["note", "show", note.id, "--json"]).succeeded)

        // The keys, as this test derives them from the stored fields and the passphrase.
        let row = try DatabaseQueue(path: harness.paths.notesDatabase.path).read { db in
            try Row.fetchOne(db, sql: "SELECT crypto_salt, crypto_iterations, crypto_wrapped_key FROM notes WHERE id = ?", arguments: [note.id])!
        }
        let passphraseKey = try LockedNoteCrypto.passphraseKey(
            try Passphrase(passphrase), salt: row["crypto_salt"], iterations: row["crypto_iterations"])
        let noteKey = try #require(LockedNoteCrypto.unwrap(row["crypto_wrapped_key"], with: passphraseKey))
        let sessionBytes = passphraseKey.withUnsafeBytes { Data($0) }, noteBytes = noteKey.withUnsafeBytes { Data($0) }

        let pid = try harness.status().pid
        #expect(try MemoryHygieneTests.memory(of: pid, contains: sessionBytes), "positive control: the open session's key is found")
        #expect(try harness.tresor(["note", "lock-now"]).succeeded)
        #expect(!(try MemoryHygieneTests.memory(of: pid, contains: sessionBytes)), "the session's passphrase key stayed in memory after Lock Now")
        #expect(!(try MemoryHygieneTests.memory(of: pid, contains: noteBytes)), "the note key stayed in memory after Lock Now")
        // Nor is a copy of the passphrase's text of its own left — the `String`s the requests
        // were decoded into are zeroed as they are taken (`TypedSecret.taking`); what NIO read is
        // not counted, as for the passcode. Where a copy is, is printed.
        let left = try MemoryHygieneTests.copy(in: pid, of: passphrase)
        #expect(left == nil, "the passphrase's text stayed in memory after Lock Now, \(left ?? "")")
    }
}
