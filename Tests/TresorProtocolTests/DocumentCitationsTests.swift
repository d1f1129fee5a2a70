import Foundation
import Testing

/// Citations of a document's section — `docs/SECURITY.md, "Availability"`, `BENCHMARKS.md,
/// "Web server"`, `docs/FORMAT.md §3 ("…")` — in the code, the tests, the scripts and the docs
/// name a section that exists: a heading, a bold label or a table cell of that document (its
/// backticks left out). A renamed or removed section fails here, not in a reader's hands.
@Suite("Cited sections exist")
struct DocumentCitationsTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A document, the title cited, and where.
    struct Citation: CustomStringConvertible {
        let document: String
        let title: String
        let place: String
        var description: String { "\(place): \(document), \"\(title)\"" }
    }

    /// The folders and files whose citations are checked. Result folders and build products are not.
    static let searched = [
        "Sources", "Tests", "Benchmarks/Sources", "Benchmarks/peers.sh", "Benchmarks/report.py", "Benchmarks/profile.sh", "Benchmarks/attackers.py",
        "Fuzz/Package.swift", "Fuzz/README.md", "scripts", "docs", "Support", "Web", "README.md", "BENCHMARKS.md",
    ]

    static func files() -> [URL] {
        var files: [URL] = []
        for entry in searched {
            let url = repository.appendingPathComponent(entry)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else { continue }
            guard isFolder.boolValue else { files.append(url); continue }
            let walk = FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil)
            while let file = walk?.nextObject() as? URL {
                if file.lastPathComponent.hasPrefix(".") { walk?.skipDescendants(); continue }
                if ["swift", "md", "py", "sh", "js", "yaml", "c", "h", "html", ""].contains(file.pathExtension) { files.append(file) }
            }
        }
        return files
    }

    static func citations() -> [Citation] {
        let cited = #/((?:docs/)?[A-Z][A-Z-]*\.md)(?:,| §[0-9.]+,?)? \(?"([^"\n]{3,80})"/#
        var found: [Citation] = []
        for file in files() {
            guard let text = try? String(contentsOf: file, encoding: .utf8), text.contains(".md") else { continue }
            for match in text.matches(of: cited) {
                let name = String(match.1)
                let document = name.hasPrefix("docs/") || name == "README.md" || name == "BENCHMARKS.md" ? name : "docs/" + name
                guard FileManager.default.fileExists(atPath: repository.appendingPathComponent(document).path) else { continue }
                let line = text[..<match.range.lowerBound].filter { $0 == "\n" }.count + 1
                let place = file.path.replacingOccurrences(of: repository.path + "/", with: "") + ":\(line)"
                found.append(Citation(document: document, title: String(match.2), place: place))
            }
        }
        return found
    }

    /// A document's section names: headings, bold labels and table cells, without backticks.
    static func sectionNames(_ document: String) throws -> [String] {
        let text = try String(contentsOf: repository.appendingPathComponent(document), encoding: .utf8).replacingOccurrences(of: "`", with: "")
        var names: [String] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("#") { names.append(String(line.drop(while: { $0 == "#" || $0 == " " }))) }
            if line.hasPrefix("|") { names += line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
            for bold in line.matches(of: #/\*\*([^*]+)\*\*/#) { names.append(String(bold.1)) }
        }
        return names
    }

    @Test func theReaderFindsCitations() {
        let all = Self.citations()
        #expect(all.contains { $0.document == "docs/SECURITY.md" && $0.title == "Availability" })
        #expect(all.contains { $0.document == "BENCHMARKS.md" && $0.title == "Web server" })
        #expect(all.count > 100, "only \(all.count) citations found")
    }

    @Test func everyCitedSectionExists() throws {
        var names: [String: [String]] = [:]
        var missing: [String] = []
        for citation in Self.citations() {
            if names[citation.document] == nil { names[citation.document] = try Self.sectionNames(citation.document) }
            let title = citation.title.replacingOccurrences(of: "`", with: "")
            if !(names[citation.document] ?? []).contains(where: { $0.contains(title) }) { missing.append(citation.description) }
        }
        #expect(missing.isEmpty, "cited sections that do not exist:\n\(missing.joined(separator: "\n"))")
    }
}
