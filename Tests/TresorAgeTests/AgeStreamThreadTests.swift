import Foundation
import Testing
import TresorAge
import TresorCrypto

/// The other half of each stream runs on a thread of its own (sealing and writing; reading and
/// opening ahead): its errors reach the caller, and a stream abandoned halfway leaves no thread.
@Suite(.serialized) struct AgeStreamThreadTests {
    static let passphrase = SecretText("correct horse battery staple")
    struct Full: Error, Equatable {}

    /// The streams' threads in this process now (they are named `tresor-age-…`; other tests'
    /// threads come and go).
    static var threads: Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.count { ((try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)) ?? "").hasPrefix("tresor-age") }
    }

    /// Waits until this process has at most `count` threads, or a few seconds have passed.
    static func settles(at count: Int) -> Bool {
        for _ in 0..<200 where threads > count { usleep(10_000) }
        return threads <= count
    }

    @Test func anOutputErrorReachesTheCaller() throws {
        var written = 0
        var encryptor = try AgeEncryptor(passphrase: Self.passphrase, workFactor: 4) { bytes in
            written += 1
            if written > 3 { throw Full() }  // the header, then two chunks
        }
        #expect(throws: Full.self) {
            for _ in 0..<64 { try encryptor.write(Data(count: 65_536)) }
            try encryptor.finish()
        }
    }

    @Test func abandonedStreamsLeaveNoThread() throws {
        let before = Self.threads
        var peak = 0
        let file = try AgeFile.encrypt(Data(count: 2_000_000), passphrase: Self.passphrase, workFactor: 4)
        for _ in 0..<20 {
            var encryptor = try AgeEncryptor(passphrase: Self.passphrase, workFactor: 4) { _ in }
            try encryptor.write(Data(count: 300_000))  // never finished
            var remaining = file[...]
            var decryptor = try AgeDecryptor(passphrase: Self.passphrase) { count in
                let next = remaining.prefix(count)
                remaining = remaining.dropFirst(next.count)
                return Data(next)
            }
            _ = try decryptor.read()  // the rest never read
            peak = max(peak, Self.threads)
        }
        #expect(peak > before, "the streams' threads are seen while they run")
        #expect(Self.settles(at: before), "\(Self.threads) threads, \(before) before")
    }

    @Test func aDamagedChunkIsReportedInOrderAndAgainAfter() throws {
        var file = try AgeFile.encrypt(Data(count: 5 * 65_536), passphrase: Self.passphrase, workFactor: 4)
        file[file.count - 3 * (65_536 + 16)] ^= 1  // in the third chunk
        var remaining = file[...]
        var decryptor = try AgeDecryptor(passphrase: Self.passphrase) { count in
            let next = remaining.prefix(count)
            remaining = remaining.dropFirst(next.count)
            return Data(next)
        }
        #expect(try decryptor.read()?.count == 65_536)
        #expect(try decryptor.read()?.count == 65_536)
        #expect(throws: AgeError.payloadAltered(chunk: 2)) { try decryptor.read() }
        #expect(throws: AgeError.payloadAltered(chunk: 2)) { try decryptor.read() }
    }

    /// Chunks are read in groups of 16 and opened on two threads: a damaged chunk in either
    /// half of a later group still comes after every good chunk before it, and a file cut at a
    /// group's edge is cut, not ended.
    @Test(arguments: [20, 28, 31])
    func aDamagedChunkInALaterGroupComesAfterTheGoodOnes(damaged: Int) throws {
        var file = try AgeFile.encrypt(Data(count: 40 * 65_536), passphrase: Self.passphrase, workFactor: 4)
        let payloadStart = file.count - 40 * (65_536 + 16)
        file[payloadStart + damaged * (65_536 + 16) + 100] ^= 1
        var decryptor = try Self.decryptor(file)
        for _ in 0..<damaged { #expect(try decryptor.read()?.count == 65_536) }
        #expect(throws: AgeError.payloadAltered(chunk: damaged)) { try decryptor.read() }
        #expect(throws: AgeError.payloadAltered(chunk: damaged)) { try decryptor.read() }
    }

    @Test(arguments: [16, 32])
    func aFileCutAtAGroupsEdgeIsTruncated(chunks: Int) throws {
        let file = try AgeFile.encrypt(Data(count: 40 * 65_536), passphrase: Self.passphrase, workFactor: 4)
        let cut = file.prefix(file.count - (40 - chunks) * (65_536 + 16))
        var decryptor = try Self.decryptor(Data(cut))
        for _ in 0..<(chunks - 1) { #expect(try decryptor.read()?.count == 65_536) }
        #expect(throws: AgeError.truncated) { try decryptor.read() }
    }

    /// A decryptor reading `file` through an input that gives what it is asked for.
    static func decryptor(_ file: Data) throws -> AgeDecryptor {
        var remaining = file[...]
        return try AgeDecryptor(passphrase: passphrase) { count in
            let next = remaining.prefix(count)
            remaining = remaining.dropFirst(next.count)
            return Data(next)
        }
    }
}
