// The shared value types (items, protection classes, notes as listed) and the web storage's
// values and rules are part of this module's API: `import TresorNotes` brings them.
@_exported import TresorModel
@_exported import TresorWebStore
