// The shared value types (items, protection classes, notes as listed) are part of this
// module's API: `import TresorAppleNotes` brings them.
@_exported import TresorModel
