import Foundation
import PostgresNIO
import TresorNotesDomain

// Folders: names sealed, so a name is found by opening the account's folder names (an account
// has few). Creating one holds the account's row lock, so two instances creating "Home" at once
// make one folder.
extension PostgresWebStore {
    func folders(account: AccountID) async throws -> [Folder] {
        let rows = try await db.read { [logger] connection in
            try await connection.rows(
                """
                SELECT f.id, f.sealed_name, (SELECT COUNT(*) FROM notes n WHERE n.folder_id = f.id AND n.deleted IS NULL)
                FROM folders f WHERE f.account_id = \(account.rawValue)
                """, logger, as: (String, Data, Int).self)
        }
        return try rows.map { id, sealed, count in Folder(id: id, name: try sealing.openText(sealed, "folders", id, "name"), noteCount: count) }
            .sorted { $0.name.localizedStandardCompare($1.name) == .orderedAscending }
    }

    func createFolder(named name: String, account: AccountID) async throws -> Folder {
        try NoteRules.validateFolderName(name)
        return try await db.transaction { [self, logger] connection in
            try await lockAccount(account, connection)
            let id = try await folderID(named: name, account: account, creating: true, connection)!
            let count =
                try await connection.value(
                    "SELECT COUNT(*) FROM notes WHERE folder_id = \(id) AND deleted IS NULL", logger, as: Int.self) ?? 0
            try await notify(.note(NoteChange(kind: .folders, noteID: nil, revision: nil, accounts: [account])), connection)
            return Folder(id: id, name: name, noteCount: count)
        }
    }

    func deleteFolder(id: String, account: AccountID) async throws {
        try await db.transaction { [self, logger] connection in
            try await lockAccount(account, connection)
            guard
                try await connection.count(
                    "SELECT 1 FROM folders WHERE id = \(id) AND account_id = \(account.rawValue) FOR UPDATE", logger) == 1
            else { throw NotesError.notFound("folder \(id.prefix(64))") }
            // Its notes move out first, in the same step; one in Recently Deleted comes back to no folder.
            let moved = try await connection.column(
                """
                UPDATE notes SET folder_id = NULL, modified = CASE WHEN deleted IS NULL THEN \(now) ELSE modified END
                WHERE folder_id = \(id) RETURNING id
                """, logger, as: String.self)
            try await connection.run("DELETE FROM folders WHERE id = \(id)", logger)
            for note in moved { try await announce(.changed, note: note, connection) }
            try await notify(.note(NoteChange(kind: .folders, noteID: nil, revision: nil, accounts: [account])), connection)
        }
    }

    /// The id of `account`'s folder called `name`, made when missing and `creating` (the caller
    /// holds the account's row lock).
    func folderID(named name: String, account: AccountID, creating: Bool, _ connection: PostgresConnection) async throws -> String? {
        try NoteRules.validateFolderName(name)
        for (id, sealed) in try await connection.rows(
            "SELECT id, sealed_name FROM folders WHERE account_id = \(account.rawValue)", logger, as: (String, Data).self)
        {
            if try sealing.openText(sealed, "folders", id, "name") == name { return id }
        }
        guard creating else { return nil }
        let id = UUID().uuidString.lowercased()
        let sealedName = try sealing.sealText(name, "folders", id, "name")
        try await connection.run(
            """
            INSERT INTO folders (id, account_id, sealed_name, created)
            VALUES (\(id), \(account.rawValue), \(sealedName), \(now))
            """, logger)
        return id
    }

    /// Folder `id` if it is `account`'s, else `notFound`.
    func requireFolder(_ id: String, of account: AccountID, _ connection: PostgresConnection) async throws {
        guard try await connection.count("SELECT 1 FROM folders WHERE id = \(id) AND account_id = \(account.rawValue)", logger) == 1 else {
            throw NotesError.notFound("folder \(id.prefix(64))")
        }
    }
}

// A device's folders (docs/SYNC.md, "Notes"): made and deleted by name, empty ones too.
extension PostgresWebStore {
    func applySyncedFolderChanges(created: [String], deleted: [String], account: AccountID) async throws -> [String] {
        for name in created + deleted { try NoteRules.validateFolderName(name) }
        return try await db.transaction { [self, logger] connection in
            try await lockAccount(account, connection)
            var changed = false
            for name in created where try await folderID(named: name, account: account, creating: false, connection) == nil {
                _ = try await folderID(named: name, account: account, creating: true, connection)
                changed = true
            }
            for name in deleted {
                guard let id = try await folderID(named: name, account: account, creating: false, connection),
                    try await connection.count("SELECT 1 FROM notes WHERE folder_id = \(id) AND deleted IS NULL", logger) == 0
                else { continue }
                // Notes of it in Recently Deleted come back to no folder, as a device's deletion does.
                for note in try await connection.column(
                    "UPDATE notes SET folder_id = NULL WHERE folder_id = \(id) RETURNING id", logger, as: String.self)
                {
                    try await announce(.changed, note: note, connection)
                }
                try await connection.run("DELETE FROM folders WHERE id = \(id)", logger)
                changed = true
            }
            if changed { try await notify(.note(NoteChange(kind: .folders, noteID: nil, revision: nil, accounts: [account])), connection) }
            return try await connection.rows(
                "SELECT id, sealed_name FROM folders WHERE account_id = \(account.rawValue)", logger, as: (String, Data).self
            ).map { id, sealed in try sealing.openText(sealed, "folders", id, "name") }.sorted()
        }
    }
}
