import Foundation
import GRDB
import TresorStorage

/// The SQLite file of one keychain (opened as every Tresor database is: ``SealedDatabase``).
///
/// Each item class has its own table (`genp`, `inet`, `cert`, `keys`, as in Apple's keychain
/// database) with the same columns:
///
/// | column | content |
/// |---|---|
/// | `id` | random 63-bit row id, bound into every ciphertext's associated data |
/// | `pdmn` | the protection class — the only attribute stored in the clear |
/// | `primary_key_tag` | blind index: HMAC of the canonical primary-key tuple (unique) |
/// | `group_tag` | blind index of the access group, so a client's items are found without decrypting others |
/// | `lookup_tag` | blind index: HMAC of the primary key without the group (v3; NULL until a row is next read or written) |
/// | `custom_indexed` | 1 once the row's tags are in `custom_attribute_tags` (v4; since v6 its searchable attributes' too; NULL until indexed) |
/// | `metadata` | every other attribute, sealed under the (class, protection class) metadata key |
/// | `row_key` | the item's own key, RFC 3394-wrapped by its class key |
/// | `secret` | the secret, sealed under the row key |
///
/// `custom_attribute_tags` holds one blind index per custom attribute name=value pair and per
/// searchable attribute of each indexed row (`tag`, `item_class`, `item_id`; see
/// ``ItemSealing/attributeTags(_:itemClass:)``).
enum KeychainDatabase {
    static func open(at url: URL) throws -> DatabasePool {
        try SealedDatabase.open(at: url, migrator: migrator)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            for itemClass in ItemClass.allCases {
                try db.execute(
                    sql: """
                        CREATE TABLE \(itemClass.table) (
                            id INTEGER PRIMARY KEY,
                            pdmn TEXT NOT NULL,
                            primary_key_tag BLOB NOT NULL UNIQUE,
                            group_tag BLOB NOT NULL,
                            metadata BLOB NOT NULL,
                            row_key BLOB NOT NULL,
                            secret BLOB NOT NULL
                        );
                        CREATE INDEX \(itemClass.table)_group ON \(itemClass.table)(group_tag);
                        """)
            }
            try db.execute(
                sql: """
                    CREATE TABLE metadata_keys (
                        item_class TEXT NOT NULL,
                        pdmn TEXT NOT NULL,
                        wrapped_key BLOB NOT NULL,
                        PRIMARY KEY (item_class, pdmn)
                    );
                    CREATE TABLE applications (
                        executable_sha256 BLOB PRIMARY KEY,
                        application_id TEXT NOT NULL UNIQUE,
                        team_id TEXT NOT NULL,
                        access_groups TEXT NOT NULL,
                        executable_path TEXT NOT NULL,
                        registered_at REAL NOT NULL
                    );
                    """)
        }
        migrator.registerMigration("v2: sealed applications") { db in
            // Application rows are sealed and found through blind indexes (see ApplicationRegistry).
            try db.execute(
                sql: """
                    DROP TABLE applications;
                    CREATE TABLE applications (
                        id_tag BLOB PRIMARY KEY,
                        executable_tag BLOB NOT NULL UNIQUE,
                        sealed BLOB NOT NULL
                    );
                    """)
        }
        // A caller that sees every group and names none (the CLI's `item get`) found items by
        // decrypting every row; this index finds them by primary key alone. Rows written
        // before it get their tag the first time a read opens them.
        migrator.registerMigration("v3: lookup index") { db in
            for itemClass in ItemClass.allCases {
                try db.execute(
                    sql: """
                        ALTER TABLE \(itemClass.table) ADD COLUMN lookup_tag BLOB;
                        CREATE INDEX \(itemClass.table)_lookup ON \(itemClass.table)(lookup_tag);
                        """)
            }
        }
        // A search by custom attributes (the Secret Service's attribute map) decrypted every
        // row of the caller's groups; these tags find the rows holding each name=value pair.
        // Rows written before get theirs the first time a read opens them (`custom_indexed`
        // NULL until then, and searches read such rows too). A trigger per table removes a
        // row's tags with it, whatever deletes it (delete, purge).
        migrator.registerMigration("v4: custom attribute index") { db in
            try db.execute(
                sql: """
                    CREATE TABLE custom_attribute_tags (
                        tag BLOB NOT NULL,
                        item_class TEXT NOT NULL,
                        item_id INTEGER NOT NULL,
                        PRIMARY KEY (tag, item_class, item_id)
                    ) WITHOUT ROWID;
                    CREATE INDEX custom_attribute_tags_item ON custom_attribute_tags(item_class, item_id);
                    """)
            for itemClass in ItemClass.allCases {
                let table = itemClass.table
                try db.execute(
                    sql: """
                        ALTER TABLE \(table) ADD COLUMN custom_indexed INTEGER;
                        CREATE INDEX \(table)_custom_unindexed ON \(table)(custom_indexed, group_tag) WHERE custom_indexed IS NULL;
                        CREATE TRIGGER \(table)_custom_tags_cleanup AFTER DELETE ON \(table) BEGIN
                            DELETE FROM custom_attribute_tags WHERE item_class = '\(table)' AND item_id = OLD.id;
                        END;
                        """)
            }
        }
        // Sync (docs/SYNC.md, "What syncs"): the record id of each syncing item and the server
        // counter of the version it holds; the changes waiting to go out, written in the same
        // transaction as the change; the losing versions of conflicts, sealed under their
        // class; what arrived but waits (a locked class, a mass deletion); the engine's state.
        migrator.registerMigration("v5: sync") { db in
            try db.execute(
                sql: """
                    CREATE TABLE sync_records (
                        record_id TEXT PRIMARY KEY,
                        item_class TEXT NOT NULL,
                        item_id INTEGER,
                        version_counter INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE UNIQUE INDEX sync_records_item ON sync_records(item_class, item_id) WHERE item_id IS NOT NULL;
                    CREATE TABLE sync_outbox (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        record_id TEXT NOT NULL,
                        device_sequence INTEGER UNIQUE,
                        base_counter INTEGER,
                        tombstone INTEGER,
                        body BLOB
                    );
                    CREATE INDEX sync_outbox_record ON sync_outbox(record_id);
                    CREATE TABLE sync_conflicts (
                        id TEXT PRIMARY KEY,
                        record_id TEXT NOT NULL,
                        pdmn TEXT NOT NULL,
                        counter INTEGER NOT NULL,
                        sealed BLOB NOT NULL
                    );
                    CREATE TABLE sync_held (
                        counter INTEGER PRIMARY KEY,
                        record_id TEXT NOT NULL,
                        reason TEXT NOT NULL,
                        record BLOB NOT NULL
                    );
                    CREATE TABLE sync_state (
                        name TEXT PRIMARY KEY,
                        value BLOB NOT NULL
                    );
                    """)
        }
        // Every searchable attribute (label, account, …) gets a tag in `custom_attribute_tags`
        // beside the free-form pairs. Every row goes back to unindexed, so searches read it
        // until its tags are written: by ``KeychainStore/indexUnindexedRows()`` for the classes
        // whose key is available, or by the first read that opens it.
        migrator.registerMigration("v6: searchable attribute index") { db in
            for itemClass in ItemClass.allCases {
                try db.execute(sql: "UPDATE \(itemClass.table) SET custom_indexed = NULL")
            }
        }
        // Every arriving item looks for a kept conflict of its record that it settles
        // (`KeychainSyncTransaction.write`): through an index, not a walk of every conflict.
        migrator.registerMigration("v7: kept conflicts by record") { db in
            try db.execute(sql: "CREATE INDEX sync_conflicts_record ON sync_conflicts(record_id)")
        }
        // The padded size of each record's last version, sent or received: its tombstone is
        // padded to it, so that a deletion is not told apart by its size (docs/SYNC.md).
        migrator.registerMigration("v8: sync record sizes") { db in
            try db.execute(sql: "ALTER TABLE sync_records ADD COLUMN padded_size INTEGER")
        }
        return migrator
    }
}

/// One stored row, as read from an item table by ``selection``.
struct StoredItem: FetchableRecord {
    /// The columns a read selects, in the order `init(row:)` reads them (by position, not by a
    /// name lookup per column: (BENCHMARKS.md, "Measured design choices")).
    static let selection = "id, pdmn, metadata, row_key, secret, lookup_tag, custom_indexed"

    var id: Int64
    var protectionClass: String
    var metadata: Data
    var rowKey: Data
    var secret: Data
    /// Nil for a row written before the lookup index (schema v3).
    var lookupTag: Data?
    /// False for a row written before the custom attribute index (schema v4) and not opened since.
    var customIndexed: Bool

    init(row: Row) {
        id = row[0]
        protectionClass = row[1]
        metadata = row[2]
        rowKey = row[3]
        secret = row[4]
        lookupTag = row[5]
        customIndexed = !row.hasNull(atIndex: 6)
    }
}
