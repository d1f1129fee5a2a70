import Foundation
import Testing
import TresorProtocol

/// docs/openapi.yaml (the daemon's socket API) and docs/web-openapi.yaml (the web server's) held
/// to the routes the daemon and its web server register: every `router.get(…)`, `post`, `put`, `patch`
/// or `delete` in Sources/TresorDaemon, Sources/TresorWebServer and Sources/TresorSyncServer is documented under its path and method, and every documented
/// operation is registered. Paths are compared with their parameters' names left out
/// (`/v1/apps/:id` is `/v1/apps/{id}`, `/static/**` is `/static/{path}`).
@Suite("The OpenAPI documents match the route table")
struct DocumentedRoutesTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// One operation: a method and a path whose parameters are written `{}`.
    struct Operation: Hashable, CustomStringConvertible {
        let method: String
        let path: String

        init(_ method: String, _ path: String) {
            self.method = method.uppercased()
            self.path = path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
                segment.hasPrefix(":") || segment == "**" || (segment.hasPrefix("{") && segment.hasSuffix("}")) ? "{}" : String(segment)
            }.joined(separator: "/")
        }

        var description: String { "\(method) \(path)" }
    }

    /// The `Route` enum's constants, read from TresorProtocol's sources (the enum and its
    /// extensions): `Route.approvalsNext` → `/v1/approvals/next`.
    static func routeConstants() throws -> [String: String] {
        let folder = repository.appendingPathComponent("Sources/TresorProtocol")
        var constants: [String: String] = [:]
        for file in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil) where file.pathExtension == "swift" {
            let source = try String(contentsOf: file, encoding: .utf8)
            for match in source.matches(of: #/public static let (\w+) = "(/[^"]*)"/#) {
                constants[String(match.1)] = String(match.2)
            }
        }
        return constants
    }

    /// Every operation the daemon's sources register, and the registrations the test could not read
    /// (a path built some new way), which fail the test rather than pass unchecked.
    static func registeredOperations() throws -> (operations: Set<Operation>, unread: [String]) {
        let constants = try routeConstants()
        var files: [URL] = []
        for module in ["TresorDaemon", "TresorWebServer", "TresorSyncServer"] {
            let folder = repository.appendingPathComponent("Sources/\(module)")
            let found = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
            files += found.compactMap { $0 as? URL }
        }
        var operations: Set<Operation> = []
        var unread: [String] = []
        for file in files where file.pathExtension == "swift" {
            let source = try String(contentsOf: file, encoding: .utf8)
            let ownPath = source.firstMatch(of: #/static let path = "([^"]*)"/#).map { String($0.1) }
            for line in source.split(separator: "\n") where line.contains("router.") {
                guard let call = line.firstMatch(of: #/\brouter\.(get|post|put|patch|delete|head)\((.*)\)\s*\{/#) else { continue }
                let argument = call.2
                let path: String?
                if let literal = argument.wholeMatch(of: #/"([^"]*)"/#) {
                    path = String(literal.1)
                } else if let named = argument.wholeMatch(of: #/RouterPath\(Route\.(\w+)(?:\s*\+\s*"([^"]*)")?\)/#) {
                    path = constants[String(named.1)].map { $0 + (named.2.map(String.init) ?? "") }
                } else if argument == "RouterPath(Self.path)" {
                    path = ownPath
                } else {
                    path = nil
                }
                guard let path else {
                    unread.append("\(file.lastPathComponent): \(line.trimmingCharacters(in: .whitespaces))")
                    continue
                }
                operations.insert(Operation(String(call.1), path))
            }
        }
        return (operations, unread)
    }

    /// The operations an OpenAPI document lists: its `paths` keys and the methods under each.
    static func documentedOperations(_ document: String) throws -> Set<Operation> {
        let text = try String(contentsOf: repository.appendingPathComponent(document), encoding: .utf8)
        var operations: Set<Operation> = []
        var inPaths = false
        var path: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where !line.hasPrefix("      ") {
            if line.first.map({ !$0.isWhitespace && $0 != "#" }) == true { inPaths = line == "paths:"; path = nil; continue }
            guard inPaths else { continue }
            if let key = line.wholeMatch(of: #/  (/\S*):\s*/#) {
                path = String(key.1)
            } else if let path, let method = line.wholeMatch(of: #/    (get|post|put|patch|delete|head):.*/#) {
                operations.insert(Operation(String(method.1), path))
            }
        }
        return operations
    }

    @Test func theReadersFindWhatTheyMust() throws {
        let constants = try Self.routeConstants()
        #expect(constants["approvalsNext"] == Route.approvalsNext && constants["widget"] == Route.widget, "in the enum and in an extension")
        let (registered, unread) = try Self.registeredOperations()
        #expect(unread.isEmpty, "registrations this test cannot read: \(unread)")
        // A route of each form: a `Route` constant, one with a suffix, a literal, `Self.path`.
        for known in [
            Operation("POST", Route.approvalsAnswer), Operation("DELETE", Route.holds + "/:id"),
            Operation("PATCH", "/api/notes/:id"), Operation("GET", "/healthz"),
        ] {
            #expect(registered.contains(known), "\(known) not found among the registered routes")
        }
        #expect(try Self.documentedOperations("docs/openapi.yaml").contains(Operation("GET", "/v1/status")))
    }

    @Test(arguments: [("docs/openapi.yaml", true), ("docs/web-openapi.yaml", false)])
    func everyRegisteredRouteIsDocumentedAndViceVersa(document: String, socketAPI: Bool) throws {
        let registered = try Self.registeredOperations().operations.filter { $0.path.hasPrefix(APIVersion.pathPrefix + "/") == socketAPI }
        let documented = try Self.documentedOperations(document)
        #expect(!registered.isEmpty && !documented.isEmpty)
        let undocumented = registered.subtracting(documented).map(\.description).sorted()
        let unregistered = documented.subtracting(registered).map(\.description).sorted()
        #expect(undocumented.isEmpty, "registered but not in \(document): \(undocumented)")
        #expect(unregistered.isEmpty, "in \(document) but not registered: \(unregistered)")
    }
}
