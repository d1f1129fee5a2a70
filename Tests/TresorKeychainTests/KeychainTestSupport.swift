import Foundation
import GRDB
import Testing
import TresorKeybag
import TresorStorage
import TresorSystem
import TresorTestSupport

@testable import TresorKeychain

// Shared helpers of the keychain tests. Every test builds its own `KeychainHome`, so tests
// never share a file and may run in parallel.

/// A fresh home in a temporary folder with a keybag and a login keychain, removed on deinit.
final class KeychainHome {
    private let folder = TemporaryHome(prefix: "tresor-keychain")
    var root: URL { folder.root }
    var paths: TresorPaths { folder.paths }
    let passcodeText: String?
    private(set) var keybag: Keybag
    private(set) var keychain: KeychainStore

    var home: URL { paths.home }
    var keychainFile: URL { paths.home.appendingPathComponent("login.keychain.db") }
    var passcode: Passcode? { passcodeText.map { TresorTestSupport.passcode($0) } }

    /// Creates the keybag (unlocked) and the keychain.
    init(passcode: String? = TestKeybag.passcodeText) throws {
        passcodeText = passcode
        let paths = folder.paths
        keybag = try Keybag.create(paths: paths, passcode: passcode.map { TresorTestSupport.passcode($0) }, settings: TestKeybag.settings())
        keychain = try KeychainStore(file: paths.home.appendingPathComponent("login.keychain.db"), keybag: keybag)
    }

    /// Simulates a daemon restart: the keybag is opened again (locked since start when a
    /// passcode is set) and the keychain reopened over the same file.
    func restart() throws {
        let newKeybag = try Keybag.open(paths: paths, settings: TestKeybag.settings())
        let newKeychain = try KeychainStore(file: keychainFile, keybag: newKeybag)
        keybag = newKeybag
        keychain = newKeychain
    }

    /// Reopens only the keychain (same keybag, same lock state).
    func reopenKeychain() throws {
        keychain = try KeychainStore(file: keychainFile, keybag: keybag)
    }

    func unlock() throws { try keybag.unlock(passcode: passcode) }

    func lock() {
        keybag.lock()
        keychain.dropUnavailableKeys()
    }

    /// Waits for the checkpoint an update, delete or purge scheduled, no longer than its bound
    /// (``DeferredCheckpoint/bound``) from now — and records an issue if it is still pending.
    func waitForCheckpoint(sourceLocation: SourceLocation = #_sourceLocation) {
        let deadline = ContinuousClock.now + DeferredCheckpoint.bound
        while keychain.hasPendingCheckpoint && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(!keychain.hasPendingCheckpoint, "the checkpoint is still pending after its bound", sourceLocation: sourceLocation)
    }

    // MARK: Files

    /// Every regular file under the home (recursively), including `-wal` and `-shm`.
    func allFiles() -> [URL] {
        var files: [URL] = []
        guard
            let enumerator = FileManager.default.enumerator(
                at: home, includingPropertiesForKeys: [.isRegularFileKey], options: [])
        else { return files }
        for case let url as URL in enumerator {
            if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { files.append(url) }
        }
        return files
    }

    /// The names of the files (under the home) that contain `needle`.
    func files(containing needle: Data, onlyKeychainFiles: Bool = false) -> [String] {
        precondition(!needle.isEmpty)
        var hits: [String] = []
        for file in allFiles() {
            if onlyKeychainFiles && !file.lastPathComponent.hasPrefix("login.keychain.db") { continue }
            guard let bytes = try? Data(contentsOf: file) else { continue }
            if bytes.range(of: needle) != nil { hits.append(file.lastPathComponent) }
        }
        return hits
    }

    func files(containing text: String, onlyKeychainFiles: Bool = false) -> [String] {
        files(containing: Data(text.utf8), onlyKeychainFiles: onlyKeychainFiles)
    }

    // MARK: Raw rows (the `database` property is internal)

    struct RawRow {
        var id: Int64
        var pdmn: String
        var metadata: Data
        var rowKey: Data
        var secret: Data
    }

    func rawRow(_ itemClass: ItemClass, id: String) throws -> RawRow {
        let rowID = try #require(Int64(id))
        let row = try keychain.database.read { db in
            try StoredItem.fetch(db, table: itemClass.table, id: rowID)
        }
        let stored = try #require(row, "no row \(id) in \(itemClass.table)")
        return RawRow(id: stored.id, pdmn: stored.protectionClass, metadata: stored.metadata, rowKey: stored.rowKey, secret: stored.secret)
    }

    func setColumn(_ itemClass: ItemClass, id: String, column: String, to value: Data) throws {
        let rowID = try #require(Int64(id))
        try keychain.database.write { db in
            try db.execute(sql: "UPDATE \(itemClass.table) SET \(column) = ? WHERE id = ?", arguments: [value, rowID])
        }
    }

    func setColumn(_ itemClass: ItemClass, id: String, column: String, to value: String) throws {
        let rowID = try #require(Int64(id))
        try keychain.database.write { db in
            try db.execute(sql: "UPDATE \(itemClass.table) SET \(column) = ? WHERE id = ?", arguments: [value, rowID])
        }
    }

    func rowCount(_ itemClass: ItemClass) throws -> Int {
        try keychain.database.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(itemClass.table)") ?? -1
        }
    }
}

extension StoredItem {
    static func fetch(_ db: Database, table: String, id: Int64) throws -> StoredItem? {
        try StoredItem.fetchOne(db, sql: "SELECT \(StoredItem.selection) FROM \(table) WHERE id = ?", arguments: [id])
    }
}

// MARK: Callers

enum Callers {
    /// Application A: its own group and its team's shared group.
    static let appA = Caller(accessGroups: ["A.app", "TEAM1.shared"], defaultAccessGroup: "A.app")
    /// Application A2, same team as A.
    static let appA2 = Caller(accessGroups: ["A2.app", "TEAM1.shared"], defaultAccessGroup: "A2.app")
    /// Application B, another team.
    static let appB = Caller(accessGroups: ["B.app"], defaultAccessGroup: "B.app")

    /// The keychain-access application (the `tresor` CLI), optionally with a passcode.
    static func keychainAccess(passcode: Passcode? = nil) -> Caller {
        Caller(accessGroups: ["tresor"], defaultAccessGroup: "tresor", seesEveryGroup: true, passcode: passcode)
    }

    /// The keychain-access application run from a terminal with an open terminal session.
    static var keychainAccessAtOpenTerminal: Caller {
        var caller = keychainAccess()
        caller.atOpenTerminalSession = true
        return caller
    }

    static func with(_ caller: Caller, passcode: Passcode?) -> Caller {
        var copy = caller
        copy.passcode = passcode
        return copy
    }
}

// MARK: Errors

/// The case of a ``KeychainError`` without its message.
enum KeychainErrorKind: String, Sendable {
    case duplicateItem, itemNotFound, interactionNotAllowed, authFailed, throttled, presenceRequired, missingEntitlement, param, decode, readOnly,
        noSuchKeychain, storage
}

extension KeychainError {
    var kind: KeychainErrorKind {
        switch self {
        case .duplicateItem: return .duplicateItem
        case .itemNotFound: return .itemNotFound
        case .interactionNotAllowed: return .interactionNotAllowed
        case .authFailed: return .authFailed
        case .throttled: return .throttled
        case .presenceRequired: return .presenceRequired
        case .missingEntitlement: return .missingEntitlement
        case .param: return .param
        case .decode: return .decode
        case .readOnly: return .readOnly
        case .noSuchKeychain: return .noSuchKeychain
        case .storage: return .storage
        }
    }
}

/// Expects `body` to throw a ``KeychainError`` of `kind`.
func expectKeychainError<T>(
    _ kind: KeychainErrorKind, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> T
) {
    do {
        let value = try body()
        Issue.record(
            "expected KeychainError.\(kind.rawValue), but it succeeded with \(value). \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
    } catch let error as KeychainError {
        #expect(
            error.kind == kind, "expected KeychainError.\(kind.rawValue), got \(error). \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
    } catch {
        Issue.record(
            "expected KeychainError.\(kind.rawValue), got \(type(of: error)): \(error). \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
    }
}

// MARK: Attributes

func genericPassword(service: String, account: String, group: String? = nil, accessible: ProtectionClass? = nil) -> ItemAttributes {
    var attributes = ItemAttributes()
    attributes.service = service
    attributes.account = account
    attributes.accessGroup = group
    attributes.accessible = accessible
    return attributes
}

func genericQuery(
    service: String, account: String? = nil, limit: ItemQuery.Limit = .one, returnData: Bool = false, returnAttributes: Bool = true
) -> ItemQuery {
    var attributes = ItemAttributes()
    attributes.service = service
    attributes.account = account
    return ItemQuery(.genericPassword, attributes: attributes, limit: limit, returnData: returnData, returnAttributes: returnAttributes)
}

/// The attributes with the keychain-set dates removed.
func withoutDates(_ attributes: ItemAttributes?) -> ItemAttributes? {
    guard var attributes else { return nil }
    attributes.creationDate = nil
    attributes.modificationDate = nil
    return attributes
}

/// Dates go through a JSON number: equal to well under a millisecond.
func sameInstant(_ a: Date?, _ b: Date?) -> Bool {
    guard let a, let b else { return false }
    return abs(a.timeIntervalSince1970 - b.timeIntervalSince1970) < 0.001
}

func secret(_ text: String) -> Data { Data(text.utf8) }

// MARK: Certificates

/// The DER of a PEM certificate of the system's CA bundle.
func certificateDER(_ name: String) throws -> Data {
    let pem = try String(contentsOfFile: "/etc/ssl/certs/\(name).pem", encoding: .utf8)
    var inside = false
    var base64 = ""
    for line in pem.split(whereSeparator: \.isNewline) {
        if line.hasPrefix("-----BEGIN CERTIFICATE") { inside = true; continue }
        if line.hasPrefix("-----END CERTIFICATE") { break }
        if inside { base64 += line.trimmingCharacters(in: .whitespaces) }
    }
    return try #require(Data(base64Encoded: base64), "\(name).pem does not decode")
}

/// Whether the certificate work accepts this DER (the brief: skip certificate adds when
/// `CertificateAttributes.fill` rejects the data).
func certificateFillAccepts(_ der: Data) -> Bool {
    (try? CertificateAttributes.fill(ItemAttributes(), der: der)) != nil
}

/// A few 32-byte windows of `blob`, spread over it (a blob longer than a page is split
/// over overflow pages, so the whole blob is never contiguous on disk).
func windows(of blob: Data, size: Int = 32) -> [Data] {
    guard blob.count > size else { return [blob] }
    let bytes = [UInt8](blob)
    var result: [Data] = []
    var offset = 0
    while offset + size <= bytes.count {
        result.append(Data(bytes[offset..<(offset + size)]))
        offset += max(size, 400)
    }
    result.append(Data(bytes[(bytes.count - size)...]))
    return result
}
