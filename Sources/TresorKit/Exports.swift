// The keychain's value types, so `import TresorKit` is all an application needs.
@_exported import enum TresorKeybag.ProtectionClass
@_exported import enum TresorKeychain.AccessControl
@_exported import struct TresorKeychain.Application
@_exported import enum TresorKeychain.ItemClass
@_exported import struct TresorKeychain.ItemAttributes
@_exported import struct TresorKeychain.ItemQuery
@_exported import struct TresorKeychain.KeychainItem
@_exported import struct TresorProtocol.APIError
@_exported import struct TresorProtocol.DaemonStatus
@_exported import struct TresorProtocol.Hold
@_exported import struct TresorProtocol.KeychainSummary
@_exported import struct TresorSystem.TresorPaths
// The notes' value types (SPEC §4).
@_exported import enum TresorNotes.AttachmentKind
@_exported import struct TresorNotes.AttachmentInfo
@_exported import struct TresorNotes.Folder
@_exported import struct TresorNotes.ImportReport
@_exported import struct TresorNotes.LockInfo
@_exported import struct TresorNotes.NoteImport
@_exported import struct TresorAppleNotes.AppleLockedNote
@_exported import struct TresorNotes.NoteSummary
@_exported import struct TresorNotes.OpenedNote
@_exported import struct TresorNotes.PassphraseStatus
@_exported import struct TresorProtocol.NotesPassphraseStatus
@_exported import struct TresorProtocol.PassphraseChangeProgress
