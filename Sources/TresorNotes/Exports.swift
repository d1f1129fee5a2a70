// The shared value types (items, protection classes, notes as listed) are part of this module's
// API: `import TresorNotes` brings them. The notes domain's values, errors and rules are imported
// from TresorNotesDomain where they are used.
@_exported import TresorModel
