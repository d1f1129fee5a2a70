import Foundation
import GRDB
import Testing
import TresorStorage

/// A restore's journal runs in one transaction, may run twice with the effect of once (a restore
/// completed again after a crash), and refuses — changing nothing — when an `expect` fails.
struct StatementJournalTests {
    static func database() throws -> (URL, DatabaseQueue) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent("test.db")
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in try db.execute(sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, value BLOB, name TEXT, number REAL)") }
        return (folder, queue)
    }

    static func journal(_ statements: [StagedStatement], in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("journal-\(UUID().uuidString.prefix(6))")
        let writer = try StatementJournal.Writer(creating: url)
        try writer.append(contentsOf: statements)
        try writer.commit()
        return url
    }

    static func rows(_ queue: DatabaseQueue) throws -> [Row] {
        try queue.read { db in try Row.fetchAll(db, sql: "SELECT * FROM t ORDER BY id") }
    }

    @Test func everyValueTypeSurvivesTheJournal() throws {
        let statement = StagedStatement(
            .expect, "SELECT ?", [.null, Int64.min.databaseValue, 1.5.databaseValue, "é\0x".databaseValue, Data([0, 255]).databaseValue])
        #expect(try StagedStatement(decoding: statement.encoded()) == statement)
        #expect(throws: StagedStatementError.malformed) { try StagedStatement(decoding: statement.encoded().dropLast()) }
        #expect(throws: StagedStatementError.malformed) { try StagedStatement(decoding: statement.encoded() + [0]) }
    }

    @Test func runningAJournalTwiceIsRunningItOnce() throws {
        let (folder, queue) = try Self.database()
        defer { try? FileManager.default.removeItem(at: folder) }
        try queue.write { db in try db.execute(sql: "INSERT INTO t (id, name) VALUES (1, 'replaced')") }
        let journal = try Self.journal(
            [
                StagedStatement("DELETE FROM t WHERE id = ?", [1.databaseValue]),
                StagedStatement(
                    "INSERT OR IGNORE INTO t (id, value, name) VALUES (?, ?, ?)", [1.databaseValue, Data([1]).databaseValue, "new".databaseValue]),
                StagedStatement("INSERT OR IGNORE INTO t (id, name) VALUES (?, ?)", [2.databaseValue, "two".databaseValue]),
                StagedStatement(.expect, "SELECT NOT EXISTS (SELECT 1 FROM t WHERE id = 2 AND name != ?)", ["two".databaseValue]),
            ], in: folder)
        try StatementJournal.apply(journal, to: queue)
        let once = try Self.rows(queue)
        try StatementJournal.apply(journal, to: queue)
        #expect(try Self.rows(queue) == once)
        #expect(once.map { $0["name"] as String } == ["new", "two"])
    }

    @Test func aFailedExpectationChangesNothing() throws {
        let (folder, queue) = try Self.database()
        defer { try? FileManager.default.removeItem(at: folder) }
        try queue.write { db in try db.execute(sql: "INSERT INTO t (id, name) VALUES (5, 'taken')") }
        let before = try Self.rows(queue)
        let journal = try Self.journal(
            [
                StagedStatement("INSERT INTO t (id, name) VALUES (6, 'six')"),
                StagedStatement(.expect, "SELECT NOT EXISTS (SELECT 1 FROM t WHERE id = 5 AND name != ?)", ["mine".databaseValue]),
            ], in: folder)
        #expect(throws: StagedStatementError.self) { try StatementJournal.check(journal, against: queue) }
        #expect(throws: StagedStatementError.self) { try StatementJournal.apply(journal, to: queue) }
        #expect(try Self.rows(queue) == before)
    }

    /// The journal is written and read in blocks: statements across the blocks' edges, one
    /// larger than a block, and thousands of small ones read back as written, in order; a
    /// journal cut anywhere is damaged, never read short.
    @Test func aJournalOfManyBlocksReadsBackInOrderAndACutOneIsDamaged() throws {
        let (folder, _) = try Self.database()
        defer { try? FileManager.default.removeItem(at: folder) }
        var statements = (0..<5_000).map { index in
            StagedStatement(
                "INSERT INTO t (id, name, value) VALUES (?, ?, ?)",
                [
                    index.databaseValue, "name \(index)".databaseValue, Data(repeating: UInt8(index % 251), count: index % 300).databaseValue,
                ])
        }
        statements.insert(
            StagedStatement("INSERT INTO t (id, value) VALUES (?, ?)", [(-1).databaseValue, Data(count: 3 << 20).databaseValue]), at: 2_500)
        let url = try Self.journal(statements, in: folder)
        var read: [StagedStatement] = []
        try StatementJournal.forEach(url) { read.append($0) }
        #expect(read == statements)

        let whole = try Data(contentsOf: url)
        for cut in [1, 3, 5, 1_000, whole.count / 2, whole.count - 1] {
            let cutURL = folder.appendingPathComponent("cut-\(cut)")
            try whole.prefix(cut).write(to: cutURL)
            #expect(throws: StagedStatementError.malformed, "cut at \(cut)") { try StatementJournal.forEach(cutURL) { _ in } }
        }
    }
}
