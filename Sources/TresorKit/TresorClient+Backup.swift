import FoundationEssentials
import TresorModel
import TresorProtocol

// The backup routes (`/v1/backup/…`), for the `tresor` CLI only. The daemon reads and writes
// the file at the path given; a backup or a restore runs for as long as the home is large, so
// the CLI calls them on a connection with a long timeout and follows their progress on another.
extension TresorClient {
    package func backupCreate(_ request: BackupCreateRequest) throws -> BackupReport {
        try call("POST", Route.backupCreate, request)
    }

    package func backupVerify(_ request: BackupVerifyRequest) throws -> BackupReport {
        try call("POST", Route.backupVerify, request)
    }

    package func backupRestore(_ request: BackupRestoreRequest) throws -> BackupReport {
        try call("POST", Route.backupRestore, request)
    }

    package func backupProgress() throws -> BackupProgress {
        try call("POST", Route.backupProgress)
    }
}
