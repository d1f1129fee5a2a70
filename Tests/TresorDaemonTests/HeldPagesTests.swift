import Foundation
import Testing
import TresorSyncProtocol
import TresorSystem

@testable import TresorDaemon

/// The pages a locked device holds (``HeldPages``): appended in order and read back; a torn
/// last append left out and written over; an altered or reordered file refused.
@Suite struct HeldPagesTests {
    static func page(_ counters: ClosedRange<UInt64>, more: Bool) -> SyncPage {
        SyncPage(
            records: counters.map {
                SyncRecord(
                    counter: $0,
                    upload: SyncUpload(
                        recordID: "record-\($0)", deviceID: "device", deviceSequence: $0, baseCounter: 0, body: Data(repeating: 7, count: 40)))
            }, cursor: counters.upperBound, more: more)
    }

    static func home() throws -> TresorPaths {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("held-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return TresorPaths(home: folder.path)
    }

    @Test func pagesAreReadBackInOrderAndATornAppendIsLeftOutAndWrittenOver() async throws {
        let paths = try Self.home()
        defer { try? FileManager.default.removeItem(at: paths.home) }
        #expect(!HeldPages.exist(paths))
        #expect(try HeldPages.load(paths).entries.isEmpty)
        var held = HeldPages()
        try held.append(Self.page(1...2, more: true), after: 0, paths)
        try held.append(Self.page(3...3, more: false), after: 2, paths)
        var read = try HeldPages.load(paths)
        #expect(read.entries.map(\.after) == [0, 2] && read.recordCount == 3 && read.cursor == 3 && read.length == held.length)
        let permissions = try FileManager.default.attributesOfItem(atPath: paths.syncHeldPages.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)

        // A crash cut the next append: its bytes are left out, and the next append goes over them.
        let handle = try FileHandle(forWritingTo: paths.syncHeldPages)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0, 0, 1, 0, 0x7b, 0x22]))
        try handle.close()
        read = try HeldPages.load(paths)
        #expect(read.recordCount == 3 && read.length == held.length)
        try read.append(Self.page(4...4, more: false), after: 3, paths)
        #expect(try HeldPages.load(paths).entries.map(\.after) == [0, 2, 3])

        // The transport serves the page after the cursor asked for, then an empty last page; a
        // page read as the last one then is followed by the page read after it.
        let transport = HeldPagesTransport(held: try HeldPages.load(paths))
        #expect(try await transport.page(after: 2, limit: 10) == Self.page(3...3, more: true))
        #expect(try await transport.page(after: 3, limit: 10) == Self.page(4...4, more: false))
        #expect(try await transport.page(after: 4, limit: 10).records.isEmpty)
        HeldPages.remove(paths)
        #expect(!HeldPages.exist(paths))
    }

    @Test func anAlteredOrReorderedFileIsRefused() throws {
        let paths = try Self.home()
        defer { try? FileManager.default.removeItem(at: paths.home) }
        var held = HeldPages()
        try held.append(Self.page(1...2, more: true), after: 0, paths)
        try held.append(Self.page(5...5, more: false), after: 4, paths)  // not after the page before
        #expect(throws: HeldPagesError.self) { try HeldPages.load(paths) }

        HeldPages.remove(paths)
        held = HeldPages()
        try held.append(Self.page(1...2, more: false), after: 0, paths)
        var bytes = try Data(contentsOf: paths.syncHeldPages)
        bytes[bytes.firstIndex(of: UInt8(ascii: "{"))!] = UInt8(ascii: "[")
        try bytes.write(to: paths.syncHeldPages)
        #expect(throws: HeldPagesError.self) { try HeldPages.load(paths) }
    }
}
