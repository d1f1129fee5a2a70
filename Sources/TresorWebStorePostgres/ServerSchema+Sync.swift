extension ServerSchema {
    /// The sync relay's tables (TresorSyncServer; docs/SYNC.md, "Transport").
    static let syncTables: Set<String> = [
        "sync_circles", "sync_devices", "sync_join_requests", "sync_challenges", "sync_sessions", "sync_records", "sync_key_envelopes",
        "sync_recovery_envelopes",
    ]

    /// The sync relay: per web account a circle (its counter, the signed device list), its
    /// devices and their credentials, join requests, sign-in challenges, device sessions, the
    /// sealed records in counter order and the wrapped circle keys per device and epoch. Record
    /// bodies, device lists and key envelopes are opaque to the server: devices seal and sign them.
    /// `recovery_key` is the public key of the circle's recovery identity, which signs a recovery
    /// join; `sync_recovery_envelopes` hold the circle keys wrapped for it, per epoch.
    static let version3: [String] = [
        // `last_counter` is the last counter handed out; a push locks this row to commit, so
        // counters are handed out in commit order (docs/SYNC.md, "Transport").
        """
        CREATE TABLE sync_circles (
            account_id TEXT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
            last_counter BIGINT NOT NULL DEFAULT 0,
            device_list_version BIGINT NOT NULL DEFAULT 0,
            device_list BYTEA,
            recovery_key BYTEA,
            created DOUBLE PRECISION NOT NULL
        )
        """,
        """
        CREATE TABLE sync_devices (
            account_id TEXT NOT NULL REFERENCES sync_circles(account_id) ON DELETE CASCADE,
            id TEXT NOT NULL,
            credential_key BYTEA NOT NULL,
            name TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('pending', 'trusted', 'removed')),
            created DOUBLE PRECISION NOT NULL,
            last_seen DOUBLE PRECISION,
            PRIMARY KEY (account_id, id)
        )
        """,
        """
        CREATE TABLE sync_join_requests (
            id TEXT PRIMARY KEY,
            account_id TEXT NOT NULL,
            device_id TEXT NOT NULL,
            identity BYTEA NOT NULL,
            nonce BYTEA NOT NULL,
            created DOUBLE PRECISION NOT NULL,
            expires DOUBLE PRECISION NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'denied')),
            FOREIGN KEY (account_id, device_id) REFERENCES sync_devices(account_id, id) ON DELETE CASCADE
        )
        """,
        """
        CREATE INDEX sync_join_requests_account ON sync_join_requests(account_id, state)
        """,
        """
        CREATE TABLE sync_challenges (
            id TEXT PRIMARY KEY,
            login_name TEXT NOT NULL,
            device_id TEXT NOT NULL,
            nonce BYTEA NOT NULL,
            expires DOUBLE PRECISION NOT NULL
        )
        """,
        """
        CREATE INDEX sync_challenges_expires ON sync_challenges(expires)
        """,
        """
        CREATE TABLE sync_sessions (
            token_digest BYTEA PRIMARY KEY,
            account_id TEXT NOT NULL,
            device_id TEXT NOT NULL,
            created DOUBLE PRECISION NOT NULL,
            expires DOUBLE PRECISION NOT NULL,
            FOREIGN KEY (account_id, device_id) REFERENCES sync_devices(account_id, id) ON DELETE CASCADE
        )
        """,
        """
        CREATE INDEX sync_sessions_expires ON sync_sessions(expires)
        """,
        """
        CREATE TABLE sync_records (
            account_id TEXT NOT NULL REFERENCES sync_circles(account_id) ON DELETE CASCADE,
            counter BIGINT NOT NULL,
            record_id TEXT NOT NULL,
            device_id TEXT NOT NULL,
            device_sequence BIGINT NOT NULL,
            base_counter BIGINT NOT NULL,
            body BYTEA NOT NULL,
            received DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (account_id, counter),
            UNIQUE (account_id, device_id, device_sequence)
        )
        """,
        """
        CREATE TABLE sync_recovery_envelopes (
            account_id TEXT NOT NULL REFERENCES sync_circles(account_id) ON DELETE CASCADE,
            epoch BIGINT NOT NULL,
            envelope BYTEA NOT NULL,
            created DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (account_id, epoch)
        )
        """,
        """
        CREATE TABLE sync_key_envelopes (
            account_id TEXT NOT NULL,
            device_id TEXT NOT NULL,
            epoch BIGINT NOT NULL,
            envelope BYTEA NOT NULL,
            created DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (account_id, device_id, epoch),
            FOREIGN KEY (account_id, device_id) REFERENCES sync_devices(account_id, id) ON DELETE CASCADE
        )
        """,
    ]
}
