extension ServerSchema {
    /// Passphrases imported from Apple Notes (docs/SYNC.md, "Notes"): a row's `source` says where
    /// it came from. An Apple one has no verifier (its notes' own wrapped keys check it) and no
    /// generation (it is never the account's current passphrase); a Tresor one keeps both.
    /// Existing rows are Tresor's and stay as they are.
    static let version8: [String] = [
        """
        ALTER TABLE passphrases ADD COLUMN source TEXT NOT NULL DEFAULT 'tresor' CHECK (source IN ('tresor', 'apple-notes'))
        """,
        """
        ALTER TABLE passphrases ALTER COLUMN verifier DROP NOT NULL
        """,
        """
        ALTER TABLE passphrases ALTER COLUMN generation DROP NOT NULL
        """,
        """
        ALTER TABLE passphrases ADD CONSTRAINT passphrases_tresor_complete
            CHECK (source = 'apple-notes' OR (verifier IS NOT NULL AND generation IS NOT NULL))
        """,
        """
        CREATE INDEX passphrases_account_salt ON passphrases(account_id, source, salt)
        """,
    ]
}
