// The shared value types (notes as listed, accounts) are part of this module's API:
// `import TresorWebStore` brings them.
@_exported import TresorModel
