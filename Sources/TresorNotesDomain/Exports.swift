// The shared value types (notes as listed, folders, accounts' ids) are part of this module's API:
// `import TresorNotesDomain` brings them.
@_exported import TresorModel
