import Foundation
import Testing

/// TresorKit's public surface is what its documentation says: every public type is in the
/// DocC catalogue's topics (or named there among the values it re-exports), the topics name
/// nothing that is not public, and every public declaration has a doc comment.
@Suite struct PublicSurfaceTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/TresorKit").standardizedFileURL

    static func swiftFiles() throws -> [(name: String, text: String)] {
        try FileManager.default.contentsOfDirectory(atPath: sources.path).filter { $0.hasSuffix(".swift") }.sorted().map {
            ($0, try String(contentsOf: sources.appendingPathComponent($0), encoding: .utf8))
        }
    }

    static func matches(_ pattern: String, in text: String) -> [String] {
        let expression = try! NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines])
        return expression.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    @Test func everyPublicTypeIsInTheCatalogueAndNothingElse() throws {
        let catalogue = try String(contentsOf: Self.sources.appendingPathComponent("TresorKit.docc/TresorKit.md"), encoding: .utf8)
        var own = Set<String>(), reexported = Set<String>()
        for file in try Self.swiftFiles() {
            own.formUnion(Self.matches(#"^public (?:final class|class|struct|enum|protocol|actor|typealias) (\w+)"#, in: file.text))
            reexported.formUnion(Self.matches(#"^@_exported import \w+ \w+\.(\w+)"#, in: file.text))
        }
        #expect(own.contains("Keychain") && reexported.contains("ItemQuery"), "the scan finds what is there")
        let topics = Set(Self.matches(#"^- ``(\w+)``"#, in: catalogue))
        #expect(own.subtracting(topics).isEmpty, "public but not in the catalogue's topics: \(own.subtracting(topics).sorted())")
        #expect(topics.subtracting(own).isEmpty, "in the topics but not a public type of TresorKit: \(topics.subtracting(own).sorted())")
        let named = Set(Self.matches(#"`(\w+)`"#, in: catalogue))
        #expect(reexported.subtracting(named).isEmpty, "re-exported but not named in the catalogue: \(reexported.subtracting(named).sorted())")
    }

    @Test func everyPublicDeclarationHasADocComment() throws {
        var undocumented: [String] = []
        for file in try Self.swiftFiles() {
            let lines = file.text.components(separatedBy: "\n")
            for (index, line) in lines.enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                guard trimmed.hasPrefix("public ") || trimmed.hasPrefix("nonisolated public ") else { continue }
                var above = index - 1
                while above >= 0, lines[above].trimmingCharacters(in: .whitespaces).hasPrefix("@") { above -= 1 }
                if above < 0 || !lines[above].trimmingCharacters(in: .whitespaces).hasPrefix("///") {
                    undocumented.append("\(file.name):\(index + 1) \(trimmed.prefix(80))")
                }
            }
        }
        #expect(undocumented.isEmpty, "public without a doc comment:\n\(undocumented.joined(separator: "\n"))")
    }
}
