// The shared value types (items, protection classes, notes as listed) are part of this
// module's API: `import TresorKeybag` brings them.
@_exported import TresorModel
