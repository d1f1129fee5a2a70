// The value types of the keychain, the notes (docs/API.md, "Notes"), the Secret Service's owners and
// grants (`tresor secret-service`) and backups (`tresor backup`), so `import TresorKit` is all an
// application needs.
@_exported import enum TresorModel.AccessControl
@_exported import struct TresorModel.AppleLockedNote
@_exported import struct TresorModel.AppleNotesReading
@_exported import struct TresorModel.Application
@_exported import struct TresorModel.AttachmentInfo
@_exported import enum TresorModel.AttachmentKind
@_exported import enum TresorModel.BackupOutcome
@_exported import enum TresorModel.ConflictPolicy
@_exported import struct TresorModel.ExecutableGrant
@_exported import struct TresorModel.Folder
@_exported import struct TresorModel.ImportReport
@_exported import struct TresorModel.ItemAttributes
@_exported import enum TresorModel.ItemClass
@_exported import struct TresorModel.ItemQuery
@_exported import struct TresorModel.KeychainItem
@_exported import struct TresorModel.LockInfo
@_exported import struct TresorModel.NoteBase
@_exported import struct TresorModel.NoteImport
@_exported import enum TresorModel.NoteMarkdown
@_exported import struct TresorModel.NoteSaveOutcome
@_exported import struct TresorModel.NoteSummary
@_exported import struct TresorModel.OpenedNote
@_exported import struct TresorModel.PassphraseStatus
@_exported import enum TresorModel.ProtectionClass
@_exported import struct TresorModel.RestoreConsent
@_exported import struct TresorProtocol.APIError
@_exported import struct TresorProtocol.DaemonStatus
@_exported import struct TresorProtocol.Hold
@_exported import struct TresorProtocol.KeychainSummary
@_exported import struct TresorProtocol.NotesPassphraseStatus
@_exported import struct TresorProtocol.PassphraseChangeProgress
@_exported import struct TresorProtocol.SecretServiceOwner
@_exported import struct TresorProtocol.SecretServiceOwnersResponse
@_exported import struct TresorProtocol.TerminalSessionInfo
@_exported import struct TresorSystem.TresorPaths
