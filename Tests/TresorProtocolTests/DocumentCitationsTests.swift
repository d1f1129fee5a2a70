import Foundation
import Testing

/// Citations of a document's section — `docs/SECURITY.md, "Availability"`, `BENCHMARKS.md,
/// "Web server"`, `docs/SECURITY.md §3.14 ("…")` — in the code, the tests, the scripts and the docs
/// name a section that exists: a heading, a bold label or a table cell of that document (its
/// backticks left out) — and a numbered section cited as `§3.14` exists under that number. A
/// renamed, renumbered or removed section fails here, not in a reader's hands.
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

    /// A numbered section cited as `§N.M` — `docs/SECURITY.md §3.5`, or `§4.24` inside the
    /// document it names — and the document it is in: the one named before it, else, in a
    /// document, that document itself (elsewhere a bare `§` names none and is not checked).
    static func numberedCitations() -> [(citation: Citation, number: String)] {
        let cited = #/(?:((?:docs/)?[A-Z][A-Z-]*\.md)\)?,? \(?)?§([0-9]+(?:\.[0-9]+)*)/#
        var found: [(Citation, String)] = []
        for file in files() {
            guard let text = try? String(contentsOf: file, encoding: .utf8), text.contains("§") else { continue }
            let relative = file.path.replacingOccurrences(of: repository.path + "/", with: "")
            for match in text.matches(of: cited) {
                let document: String
                if let name = match.1.map(String.init) {
                    document = name.hasPrefix("docs/") || name == "README.md" || name == "BENCHMARKS.md" ? name : "docs/" + name
                } else if file.pathExtension == "md" {
                    document = relative
                } else {
                    continue
                }
                guard FileManager.default.fileExists(atPath: repository.appendingPathComponent(document).path) else { continue }
                let line = text[..<match.range.lowerBound].filter { $0 == "\n" }.count + 1
                found.append((Citation(document: document, title: "§" + match.2, place: "\(relative):\(line)"), String(match.2)))
            }
        }
        return found
    }

    /// A document's numbered sections: headings that start with a number (`### 3.14 Backups`,
    /// `## 4. What Tresor does not protect against`), and the numbered bold items under a
    /// numbered `##` heading (`4.24` is item `24. **…**` of section 4).
    static func sectionNumbers(_ document: String) throws -> Set<String> {
        let text = try String(contentsOf: repository.appendingPathComponent(document), encoding: .utf8)
        var numbers: Set<String> = []
        var section: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if let heading = line.wholeMatch(of: #/#+ ([0-9]+(?:\.[0-9]+)*)\.? .*/#) {
                numbers.insert(String(heading.1))
                if line.hasPrefix("## ") { section = String(heading.1) }
            } else if line.hasPrefix("## ") {
                section = nil
            } else if let section, let item = line.prefixMatch(of: #/([0-9]+)\. \*\*/#) {
                numbers.insert(section + "." + item.1)
            }
        }
        return numbers
    }

    @Test func everyCitedNumberedSectionExists() throws {
        let all = Self.numberedCitations()
        #expect(all.contains { $0.citation.document == "docs/SECURITY.md" && $0.number == "4.24" })
        #expect(all.count > 100, "only \(all.count) numbered citations found")
        var numbers: [String: Set<String>] = [:]
        var missing: [String] = []
        for (citation, number) in all {
            if numbers[citation.document] == nil { numbers[citation.document] = try Self.sectionNumbers(citation.document) }
            if !(numbers[citation.document] ?? []).contains(number) { missing.append(citation.description) }
        }
        #expect(missing.isEmpty, "cited numbered sections that do not exist:\n\(missing.joined(separator: "\n"))")
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
