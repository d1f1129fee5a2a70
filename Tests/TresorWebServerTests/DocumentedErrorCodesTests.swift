import Foundation
import Testing
import TresorProtocol

@testable import TresorWebServer

/// The error codes the two OpenAPI documents promise, held to `APIError.Code`: a code added to
/// the Swift enum, or a status changed, fails here until docs/openapi.yaml (the socket API) and
/// docs/web-openapi.yaml (the web API) say so.
@Suite struct DocumentedErrorCodesTests {
    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs")

    /// Codes of the web API only: its sessions, its CSRF guard and its accounts' quotas.
    static let webOnly: Set<APIError.Code> = [.unauthorized, .csrf, .quotaExceeded]

    static func text(_ name: String) throws -> String {
        try String(contentsOf: docs.appendingPathComponent(name), encoding: .utf8)
    }

    /// The `ErrorCode` schema of docs/openapi.yaml, up to the next schema.
    static func socketErrorCode() throws -> Substring {
        let text = try text("openapi.yaml")
        let start = try #require(text.range(of: "\n    ErrorCode:\n"))
        let end = try #require(text[start.upperBound...].firstRange(of: #/\n    [A-Z]\w*:\n/#))
        return text[start.upperBound..<end.lowerBound]
    }

    static func codes(_ names: some Sequence<Substring>) throws -> [APIError.Code] {
        try names.map { name in try #require(APIError.Code(rawValue: String(name)), "\(name) is no APIError.Code") }
    }

    @Test func theSocketDocumentListsEveryCodeButTheWebsOwn() throws {
        let schema = try Self.socketErrorCode()
        let listed = try Self.codes(schema.matches(of: #/\n        - (\w+)/#).map(\.1))
        #expect(listed.count == Set(listed).count, "a code listed twice")
        #expect(Set(listed) == Set(APIError.Code.allCases).subtracting(Self.webOnly))
    }

    @Test(arguments: Set(APIError.Code.allCases).subtracting(webOnly).sorted { $0.rawValue < $1.rawValue })
    func theSocketDocumentGivesEachCodesStatuses(_ code: APIError.Code) throws {
        let schema = try Self.socketErrorCode()
        let os = code.osStatus.map(String.init) ?? "null"
        let entry = "\(code.rawValue): { httpStatus: \(code.httpStatus.code), osStatus: \(os) }"
        #expect(schema.contains("\n        \(entry)"), "x-tresor-codes should say \(entry)")
        let row = try #require(schema.firstMatch(of: try Regex("\\| `\(code.rawValue)` \\| (\\d+) \\| ([^|]+) \\|")), "no table row for \(code)")
        #expect(Int(row.output[1].substring ?? "") == code.httpStatus.code, "the table's status for \(code)")
        let osColumn = String(row.output[2].substring ?? "").trimmingCharacters(in: .whitespaces)
        #expect(code.osStatus.map { osColumn.hasPrefix("\($0) ") } ?? (osColumn == "—"), "the table's OSStatus for \(code)")
    }

    /// The web document's `Error.code` enum names every code its descriptions mention, and every
    /// code the web server's routes and the notes' and the storage's failures are answered with.
    @Test func theWebDocumentListsTheCodesItAnswersWith() throws {
        let text = try Self.text("web-openapi.yaml")
        let enumText = try #require(text.firstMatch(of: #/code:\s*\n\s*type: string\s*\n\s*enum: \[([^\]]*)\]/#)).1
        let listed = Set(try Self.codes(enumText.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines)[...] }))
        let allNames = Set(APIError.Code.allCases.map(\.rawValue))
        let mentioned = Set(text.matches(of: #/`(\w+)`/#).map { String($0.1) }.filter(allNames.contains))
        let unlisted = Set(try Self.codes(mentioned.map { $0[...] })).subtracting(listed)
        #expect(unlisted.isEmpty, "mentioned but not listed: \(unlisted.map(\.rawValue).sorted())")

        let sources = Self.docs.deletingLastPathComponent().appendingPathComponent("Sources")
        var answered = Set<Substring>()
        let web = try #require(FileManager.default.enumerator(at: sources.appendingPathComponent("TresorWebServer"), includingPropertiesForKeys: nil))
        for case let file as URL in web where file.pathExtension == "swift" {
            answered.formUnion(try String(contentsOf: file, encoding: .utf8).matches(of: #/APIError\(\.(\w+)/#).map(\.1))
        }
        // The daemon's words for the failures the web routes share with it.
        let middleware = try String(contentsOf: sources.appendingPathComponent("TresorDaemon/Middleware/ErrorMiddleware.swift"), encoding: .utf8)
        for shared in ["apiError(for error: NotesError)", "apiError(for refusal: StorageRefusal)"] {
            let start = try #require(middleware.range(of: "static func \(shared)"))
            let end = middleware.range(of: "static func", range: start.upperBound..<middleware.endIndex)?.lowerBound ?? middleware.endIndex
            answered.formUnion(middleware[start.upperBound..<end].matches(of: #/APIError\(\.(\w+)/#).map(\.1))
        }
        #expect(answered.count > 10, "the sources were not read")
        let unanswerable = Set(try Self.codes(answered)).subtracting(listed)
        #expect(unanswerable.isEmpty, "answered but not listed: \(unanswerable.map(\.rawValue).sorted())")
    }
}
