import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// What the sync end-to-end suites share: device homes with their own `tresord`, driven through
/// `tresor sync … --json` (each output checked against docs/cli-json.schema.json), joined to a
/// real server instance on a throwaway PostgreSQL.
enum SyncE2E {
    static let passcode = "e2e-sync-device-passcode"

    /// A device home with its daemon, knowing the account's password as a secret.
    /// - Parameters:
    ///   - password: the account's password; nil when the caller declares it later.
    ///   - background: whether the daemon syncs by itself; off, only `tresor sync now` syncs, so
    ///     a suite can count what each one does.
    static func device(_ password: String?, background: Bool = false) throws -> Harness {
        try Harness.initialized(passcode: passcode, secrets: password.map { [$0] } ?? [], daemonArguments: background ? [] : ["--no-background-sync"])
    }

    static let schema = Result { try JSONSchemaCheck(file: Repository.root.appendingPathComponent("docs/cli-json.schema.json")) }

    /// `tresor sync ARGUMENTS --json`, checked against its schema in docs/cli-json.schema.json, decoded.
    static func sync<T: Decodable>(
        _ device: Harness, _ type: T.Type, _ arguments: [String], input: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> T {
        let result = try device.tresor(["sync"] + arguments + ["--json"], input: input)
        #expect(result.succeeded, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
        let check = try schema.get()
        // The most specific command the schema names: "sync conflicts show", else "sync conflicts".
        let command = [2, 1].map { (["sync"] + arguments.prefix($0)).joined(separator: " ") }.first { check.schema(forCommand: $0) != nil } ?? "sync"
        let violations = check.violations(
            of: try JSONTree(parsing: Data(result.stdout.utf8)), against: try #require(check.schema(forCommand: command)))
        #expect(violations.isEmpty, "\(command): \(violations)\n\(result.stdout)", sourceLocation: sourceLocation)
        return try CLIJSON.decode(T.self, from: Data(result.stdout.utf8))
    }

    static func join(_ device: Harness, _ server: WebServerAddress, name: String, password: String, wait: Bool = false) throws -> SyncJoinAnswer {
        try Self.sync(
            device, SyncJoinAnswer.self,
            ["join", server.origin, "--account", "ada", "--password-stdin", "--device-name", name] + (wait ? [] : ["--no-wait"]),
            input: password + "\n")
    }

    /// Joins `device` to the sync account `ada` through `server` as `name`, has `approver` (a
    /// trusted device) approve its request with its passcode, and checks that it is trusted.
    /// - Parameters:
    ///   - device: the joining device.
    ///   - server: the address it joins through (an instance, or a proxy in front of one).
    ///   - name: its device name.
    ///   - password: the account's password.
    ///   - approver: a trusted device of the circle.
    ///   - approverPasscode: the approver's keybag passcode.
    static func joinApproved(
        _ device: Harness, _ server: WebServerAddress, name: String, password: String, by approver: Harness,
        approverPasscode: String = passcode, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let request = try #require(try join(device, server, name: name, password: password).requestID, sourceLocation: sourceLocation)
        _ = try sync(approver, SyncRequestsAnswer.self, ["approve", request, "--passcode-stdin"], input: approverPasscode + "\n")
        let joined = try sync(device, SyncJoinAnswer.self, ["join", server.origin, "--account", "ada", "--no-wait"], sourceLocation: sourceLocation)
        #expect(joined.state == .trusted, sourceLocation: sourceLocation)
    }

    /// What a device holds of what syncs, to compare devices with: its synchronizable items as
    /// "service: secret" and the bodies of its notes outside Recently Deleted, each as many times
    /// as it is there (a duplicate shows), sorted.
    struct Contents: Equatable, CustomStringConvertible {
        var items: [String]
        var notes: [String]

        var description: String { "items \(items), notes \(notes)" }
    }

    static func contents(of device: Harness, sourceLocation: SourceLocation = #_sourceLocation) throws -> Contents {
        struct Listed: Decodable {
            struct Attributes: Decodable { var service: String? }
            var attributes: Attributes?
            var secret: Data?
        }
        let found = try device.tresor(["item", "find", "--synchronizable", "--show-secrets", "--json"])
        let none = !found.succeeded && found.stdout.contains("\"itemNotFound\"")
        #expect(found.succeeded || none, "\(found.stdout) \(found.stderr)", sourceLocation: sourceLocation)
        let items = try CLIJSON.decode([Listed].self, from: Data((none ? "[]" : found.stdout).utf8)).map {
            "\($0.attributes?.service ?? "?"): \($0.secret.map { String(decoding: $0, as: UTF8.self) } ?? "?")"
        }
        let notes = try device.json([NoteSummary].self, ["note", "list"]).map { try device.json(OpenedNote.self, ["note", "show", $0.id]).body }
        return Contents(items: items.sorted(), notes: notes.sorted())
    }

    /// A server with the web account `ada`, and two device homes joined to its sync account:
    /// the laptop created the circle, the phone was approved by it.
    /// - Parameters:
    ///   - background: whether the devices' daemons sync by themselves.
    ///   - instances: server instances on one database; the laptop uses the first, the phone the last.
    static func twoJoinedDevices(background: Bool = false, instances: Int = 1) async throws -> (
        cluster: ServerInstances, laptop: Harness, phone: Harness
    ) {
        let (cluster, _, laptop, phone) = try await twoJoinedDevicesAndBrowser(background: background, instances: instances)
        return (cluster, laptop, phone)
    }

    /// ``twoJoinedDevices(background:instances:)``, with the browser signed in to `ada` on the
    /// first instance (the web client's API), and more of the servers' configuration.
    static func twoJoinedDevicesAndBrowser(background: Bool = false, instances: Int = 1, configuration: [String: Any] = [:]) async throws -> (
        cluster: ServerInstances, browser: WebBrowser, laptop: Harness, phone: Harness
    ) {
        let cluster = try await ServerInstances(count: instances, configuration: configuration.merging(["webRegistration": "open"]) { $1 })
        let server = cluster.servers[0], phoneServer = cluster.servers[instances - 1]
        let (browser, password) = try cluster.registered("ada", on: server)
        let laptop = try device(password, background: background), phone = try device(password, background: background)
        _ = try join(laptop, server, name: "laptop", password: password)
        try joinApproved(phone, phoneServer, name: "phone", password: password, by: laptop)
        return (cluster, browser, laptop, phone)
    }
}
