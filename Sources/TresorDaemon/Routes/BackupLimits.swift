import TresorBackup

/// The work factors a backup may be written with.
enum BackupLimits {
    /// The one `age -p` uses: 256 MiB and about a second (BENCHMARKS.md).
    static let defaultWorkFactor = BackupCreation.defaultWorkFactor
    /// Below 2^14 a guess costs next to nothing; above 2^20 a reader refuses the file.
    static let workFactors = 14...20
}
