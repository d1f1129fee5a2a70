/// The work factors a backup may be written with (the default is
/// `BackupCreation.defaultWorkFactor`, the one `age -p` uses).
enum BackupLimits {
    /// Below 2^14 a guess costs next to nothing; above 2^20 a reader refuses the file.
    static let workFactors = 14...20
}
