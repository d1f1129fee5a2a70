// The keychain's value types, so `import TresorKit` is all an application needs.
@_exported import enum TresorModel.ProtectionClass
@_exported import enum TresorModel.AccessControl
@_exported import struct TresorModel.Application
@_exported import enum TresorModel.ItemClass
@_exported import struct TresorModel.ItemAttributes
@_exported import struct TresorModel.ItemQuery
@_exported import struct TresorModel.KeychainItem
@_exported import struct TresorProtocol.APIError
@_exported import struct TresorProtocol.DaemonStatus
@_exported import struct TresorProtocol.Hold
@_exported import struct TresorProtocol.KeychainSummary
@_exported import struct TresorProtocol.TerminalSessionInfo
@_exported import struct TresorSystem.TresorPaths
// The notes' value types (docs/API.md, "Notes").
@_exported import enum TresorModel.AttachmentKind
@_exported import struct TresorModel.AttachmentInfo
@_exported import struct TresorModel.Folder
@_exported import struct TresorModel.ImportReport
@_exported import struct TresorModel.LockInfo
@_exported import struct TresorModel.NoteImport
@_exported import struct TresorModel.AppleNotesReading
@_exported import struct TresorModel.AppleLockedNote
@_exported import struct TresorModel.NoteSummary
@_exported import struct TresorModel.OpenedNote
@_exported import struct TresorModel.NoteBase
@_exported import struct TresorModel.NoteSaveOutcome
@_exported import enum TresorModel.NoteMarkdown
@_exported import struct TresorModel.PassphraseStatus
@_exported import struct TresorProtocol.NotesPassphraseStatus
@_exported import struct TresorProtocol.PassphraseChangeProgress
// The Secret Service's owners and grants (`tresor secret-service`).
@_exported import struct TresorModel.ExecutableGrant
@_exported import struct TresorProtocol.SecretServiceOwner
@_exported import struct TresorProtocol.SecretServiceOwnersResponse
// Backups (`tresor backup`): what a restore does with a conflict, and what became of each thing.
@_exported import enum TresorModel.ConflictPolicy
@_exported import enum TresorModel.BackupOutcome
@_exported import struct TresorModel.RestoreConsent
