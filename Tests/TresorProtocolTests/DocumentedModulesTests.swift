import Foundation
import Testing

/// docs/ARCHITECTURE.md and the README's code map held to Package.swift: every module and
/// executable the package builds (the targets outside Tests/, Examples/ and the performance
/// harness's Benchmarks/) is drawn in the ARCHITECTURE diagram, has its entry in ARCHITECTURE's
/// module list and a line in the README's "The code"; and every module those name is one the
/// package builds.
@Suite("The architecture docs name every module")
struct DocumentedModulesTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ file: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(file), encoding: .utf8)
    }

    /// Package.swift's product targets, by name, with the folder each lives in.
    static func moduleFolders() throws -> [String: String] {
        var folders: [String: String] = [:]
        let manifest = try text("Package.swift")
        let declarations = manifest.matches(of: #/\.(target|executableTarget|systemLibrary|testTarget)\(name: "([^"]+)"/#)
        for (index, match) in declarations.enumerated() where match.1 != "testTarget" {
            let name = String(match.2)
            // A declaration runs to the next one: its `path:` may be on a later line.
            let end = index + 1 < declarations.count ? declarations[index + 1].range.lowerBound : manifest.endIndex
            let path = manifest[match.range.upperBound..<end].firstMatch(of: #/path: "([^"]+)"/#).map { String($0.1) } ?? "Sources/\(name)"
            guard !["Tests/", "Examples/", "Benchmarks/"].contains(where: { path.hasPrefix($0) }) else { continue }
            folders[name] = path
        }
        return folders
    }

    /// The names in a text that look like one of the package's modules.
    static func moduleLikeNames(in text: String) -> Set<String> {
        // Simple word boundaries: by Unicode's, `TresorKit's` would be one word.
        let name = #/\b(?:C?Tresor[A-Za-z]+|CDBus|tresor(?:d|-[a-z-]+)?)\b/#.wordBoundaryKind(.simple)
        return Set(text.matches(of: name).map { String($0.0) })
    }

    /// ARCHITECTURE's diagram: its first fenced block.
    static func diagram() throws -> String {
        let blocks = try text("docs/ARCHITECTURE.md").components(separatedBy: "```")
        return try #require(blocks.count > 2 ? blocks[1] : nil, "docs/ARCHITECTURE.md has no diagram")
    }

    /// ARCHITECTURE's module list: the bold names at the start of its list entries
    /// (`- **TresorKit** — …`, `- **tresord / tresor** — …`, `- **TresorDaemon/Desktop** — …`).
    static func listedModules() throws -> Set<String> {
        var names: Set<String> = []
        for line in try text("docs/ARCHITECTURE.md").split(separator: "\n") {
            guard let entry = line.firstMatch(of: #/^- \*\*([^*]+)\*\*/#) else { continue }
            for part in entry.1.split(whereSeparator: { " /,".contains($0) }) where moduleLikeNames(in: String(part)).contains(String(part)) {
                names.insert(String(part))
            }
        }
        return names
    }

    /// The README's code map: the folders named at the start of the lines of its "The code" block.
    static func codeMapFolders() throws -> Set<String> {
        let readme = try text("README.md")
        let section = try #require(readme.range(of: "## The code\n").map { readme[$0.upperBound...] }, "README.md has no \"The code\"")
        let block = section.components(separatedBy: "```")[1]
        var folders: Set<String> = []
        var parent = ""
        for line in block.split(separator: "\n") {
            guard let entry = line.firstMatch(of: #/^((?:  )?)([A-Za-z][A-Za-z0-9-]*)/(?: |$)/#) else { continue }
            if entry.1.isEmpty { parent = String(entry.2) }
            folders.insert(entry.1.isEmpty ? String(entry.2) : "\(parent)/\(entry.2)")
        }
        return folders
    }

    @Test func theReadersFindWhatTheyMust() throws {
        let modules = try Self.moduleFolders()
        #expect(modules["TresorKit"] == "Sources/TresorKit")
        #expect(modules["TresorWebClient"] == "Web")
        #expect(modules["CDBus"] == "Sources/CDBus")
        #expect(modules["tresor-server-migrate"] != nil)
        #expect(
            modules["ProbeAlpha"] == nil && modules["store-token"] == nil && modules["tresor-bench"] == nil,
            "test fixtures, examples and the performance harness are not modules")
        #expect(try Self.listedModules().isSuperset(of: ["TresorKit", "tresord", "tresor", "TresorDaemon", "TresorWebServer"]))
        #expect(try Self.codeMapFolders().isSuperset(of: ["Sources/TresorKit", "Web", "Tests"]))
    }

    @Test func theDiagramDrawsEveryModule() throws {
        let modules = Set(try Self.moduleFolders().keys)
        let drawn = Self.moduleLikeNames(in: try Self.diagram())
        #expect(modules.subtracting(drawn).sorted().isEmpty, "missing from docs/ARCHITECTURE.md's diagram: \(modules.subtracting(drawn).sorted())")
        #expect(drawn.subtracting(modules).sorted().isEmpty, "in the diagram but not in Package.swift: \(drawn.subtracting(modules).sorted())")
    }

    @Test func theModuleListHasAnEntryForEveryModule() throws {
        let modules = Set(try Self.moduleFolders().keys)
        let listed = try Self.listedModules()
        #expect(modules.subtracting(listed).sorted().isEmpty, "no entry in docs/ARCHITECTURE.md's list: \(modules.subtracting(listed).sorted())")
        #expect(listed.subtracting(modules).sorted().isEmpty, "listed but not in Package.swift: \(listed.subtracting(modules).sorted())")
    }

    @Test func theReadmesCodeMapNamesEveryModulesFolder() throws {
        let folders = Set(try Self.moduleFolders().values)
        let mapped = try Self.codeMapFolders()
        #expect(folders.subtracting(mapped).sorted().isEmpty, "missing from README.md's \"The code\": \(folders.subtracting(mapped).sorted())")
        let unknown = mapped.filter { $0.hasPrefix("Sources/") }.subtracting(folders).sorted()
        #expect(unknown.isEmpty, "in README.md's \"The code\" but not in Package.swift: \(unknown)")
    }
}
