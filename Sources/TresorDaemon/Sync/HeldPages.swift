import Foundation
import TresorProtocol
import TresorSyncProtocol
import TresorSystem

extension TresorPaths {
    /// The sync account's pages pulled while the keybag was locked (``HeldPages``).
    var syncHeldPages: URL { home.appendingPathComponent("sync-held-pages") }
}

/// What a device pulled while its keybag was locked (docs/SYNC.md, "Background sync"): the
/// server's pages as they came — records sealed under the circle keys and signed by their
/// devices, neither opened nor applied — in order, each with the cursor it was read after.
/// Append-only, each append fsync'd, bounded by ``byteLimit``. At the unlock the sync engine
/// reads them as it reads the server (``HeldPagesTransport``), with every check of a pull, and
/// the file goes. Its cursor (the last page's) runs ahead of the engine's progress, which moves
/// only as pages are applied: a crash leaves pages to apply, or the server to read again.
struct HeldPages: Sendable {
    struct Entry: Codable, Sendable {
        /// The cursor the page was asked after.
        var after: UInt64
        var page: SyncPage
    }

    var entries: [Entry] = []
    /// The bytes of the file holding whole entries; a torn last append lies past them.
    var length = 0

    /// The bytes held beyond which a locked device stops pulling (the rest waits on the server).
    static let byteLimit = 16 << 20
    /// The most the file can hold: the limit, passed by one last page (its bodies in base64).
    static let fileLimit = byteLimit + 2 * (SyncLimits.pageBodyBytes + SyncLimits.bodyBytes)

    /// The records held.
    var recordCount: Int { entries.reduce(0) { $0 + $1.page.records.count } }

    /// Where the next pull while locked starts: after the last page held.
    var cursor: UInt64? { entries.last?.page.cursor }

    /// Whether no more may be held.
    var isFull: Bool { length >= Self.byteLimit }

    /// Reads the held pages; a torn last entry (an append a crash cut) is left out.
    /// - Throws: ``HeldPagesError/damaged(_:)`` when a whole entry does not decode, or the pages do
    ///   not follow each other: the file was altered.
    static func load(_ paths: TresorPaths) throws -> HeldPages {
        let bytes: Data
        do {
            bytes = try SecureFiles.read(paths.syncHeldPages, limit: fileLimit)
        } catch SecureFileError.notFound {
            return HeldPages()
        } catch {
            throw HeldPagesError.damaged("unreadable (\(error))")
        }
        var held = HeldPages()
        var offset = bytes.startIndex
        while bytes.endIndex - offset >= 4 {
            let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            guard bytes.endIndex - offset - 4 >= size else { break }
            let entry: Entry
            do {
                entry = try SyncJSON.decoder.decode(Entry.self, from: bytes[offset + 4..<offset + 4 + size])
            } catch {
                throw HeldPagesError.damaged("page \(held.entries.count + 1) does not decode")
            }
            if let cursor = held.cursor, entry.after != cursor {
                throw HeldPagesError.damaged("page \(held.entries.count + 1) does not follow the one before")
            }
            held.entries.append(entry)
            offset += 4 + size
            held.length = offset - bytes.startIndex
        }
        return held
    }

    /// Appends `page`, read after `after`, durably (over a torn last entry, if any).
    /// - Throws: `SecureFileError`; the page is then not held.
    mutating func append(_ page: SyncPage, after: UInt64, _ paths: TresorPaths) throws {
        let json = try SyncJSON.encoder.encode(Entry(after: after, page: page))
        let size = UInt32(json.count)
        var framed = Data([UInt8(size >> 24), UInt8(size >> 16 & 0xff), UInt8(size >> 8 & 0xff), UInt8(size & 0xff)])
        framed.append(json)
        try SecureFiles.append(framed, to: paths.syncHeldPages, after: length)
        entries.append(Entry(after: after, page: page))
        length += framed.count
    }

    /// Whether pages are held (a file, whole or not).
    static func exist(_ paths: TresorPaths) -> Bool { SecureFiles.exists(paths.syncHeldPages) }

    /// Forgets the held pages (applied, refused, or the device left).
    static func remove(_ paths: TresorPaths) {
        SecureFiles.overwriteAndRemove(paths.syncHeldPages)
    }
}

/// Why the held pages were not applied.
enum HeldPagesError: Error, CustomStringConvertible {
    case damaged(String)

    var description: String {
        switch self {
        case .damaged(let why): return "the pages held while locked are damaged: \(why)"
        }
    }
}

/// The held pages as the sync engine's transport: each page after the cursor asked for, and an
/// empty last page past them — so a pull at the unlock applies what was held, checked as any
/// page from the server, with no server needed.
struct HeldPagesTransport: SyncRecordTransport {
    let held: HeldPages

    func push(_ request: SyncPushRequest) async throws -> SyncPushResponse {
        throw HeldPagesError.damaged("held pages take no push")
    }

    func page(after cursor: UInt64, limit: Int) async throws -> SyncPage {
        guard var page = held.entries.first(where: { $0.after == cursor })?.page else {
            return SyncPage(records: [], cursor: cursor, more: false)
        }
        // The server said whether more followed when the page was read; a later page held is more now.
        if held.entries.contains(where: { $0.after == page.cursor }) { page.more = true }
        return page
    }
}
