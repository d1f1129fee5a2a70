import FoundationEssentials

/// What a restore does with something of the backup that the home holds in another form: an
/// item with the same primary key but another secret or attributes, a note with the same id
/// but other content (docs/FORMAT.md, "Restoring").
public enum ConflictPolicy: String, Codable, CaseIterable, Sendable {
    /// Keep what the home holds; report the backup's version as a conflict.
    case skip
    /// Replace what the home holds with the backup's version.
    case replace
}

/// What a backup did with one thing of the home, or a restore (or its `--dry-run`) with one
/// thing of the backup.
public enum BackupOutcome: String, Codable, CaseIterable, Sendable {
    /// Written into the backup.
    case backedUp
    /// Not written into the backup; the reason says why.
    case leftOut
    /// Added to the home.
    case restored
    /// Took the place of the home's own version (`--on-conflict replace`).
    case replaced
    /// The home holds it already, identical: nothing to do.
    case alreadyPresent
    /// The home holds another version of it: left as it is (`--on-conflict skip`).
    case conflict
    /// Not restored; the reason says why.
    case skipped
}
