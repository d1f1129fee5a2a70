import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorModel
import TresorProtocol

struct SecretServiceImport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret-service",
        abstract: "Copy the items of another Secret Service provider (gnome-keyring, KeePassXC) into Tresor.",
        discussion: """
            Run it while the other provider still owns org.freedesktop.secrets on your session bus, \
            before tresord takes the name over. Every item of every collection it lets you read is \
            copied into the login keychain with its label, attributes, secret and dates; the other \
            provider is left as it was. A locked collection that its provider would unlock only \
            with a prompt is skipped: unlock it in its own tool and import again. Items already \
            copied are skipped, so importing twice changes nothing. With --owner, the items belong \
            to that executable (secret-tool, git's credential helper) as if it had stored them; \
            without, they go to the group secret-service:imported, which no program sees until \
            you allow one (`tresor secret-service allow --exe PATH --group secret-service:imported`). \
            Asks for the passcode. The other provider is read by tresor-read-secret-service, a \
            process of its own.
            """)

    @OptionGroup var options: GlobalOptions
    @Option(help: "The executable whose items these become (e.g. /usr/bin/secret-tool).") var owner: String?
    @Flag(help: "Read the passcode from standard input.") var passcodeStdin = false

    /// Items per request, and bytes of JSON per request: well under the daemon's 1 MiB.
    static let batchItems = 200
    static let batchBytes = 768 * 1024

    func run() throws {
        try Output.run(options) {
            let export = try CompanionProcess.readJSON(SecretServiceExport.self, from: CompanionExecutable.secretServiceReader)
            var output = SecretServiceImportOutput(provider: export.provider, group: nil, copied: [], skipped: export.skipped)
            let (batches, tooLarge) = try Self.batches(export.items)
            output.skipped += tooLarge
            if !batches.isEmpty {
                let client = try options.connect()
                var passcode: String?
                if try client.status().passcodeSet {
                    var input = SecretInput(fromStandardInput: passcodeStdin)
                    passcode = try input.next("Passcode (to import \(export.provider)'s items):")
                }
                let ownerPath = owner.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
                var progress = ProgressBar.enabled ? ProgressBar(label: "Importing") : nil
                for batch in batches {
                    let part = try client.importSecretServiceItems(batch, ownerPath: ownerPath, passcode: passcode)
                    output.group = part.group
                    output.copied += part.copied
                    output.skipped += part.skipped
                    progress?.update(done: output.copied.count + output.skipped.count, total: export.items.count + export.skipped.count)
                }
                progress?.finish()
            }
            if options.json { return Output.json(output) }
            output.printReport()
        }
    }

    /// Splits items into requests of at most ``batchItems`` items and ``batchBytes`` bytes; an
    /// item that alone would be larger is left out, with the reason.
    static func batches(_ items: [SecretServiceExport.Item]) throws -> (batches: [[SecretServiceExport.Item]], tooLarge: [SecretServiceSkip]) {
        let encoder = APICoding.encoder
        var sized: [(item: SecretServiceExport.Item, bytes: Int)] = []
        var tooLarge: [SecretServiceSkip] = []
        for item in items {
            let bytes = try encoder.encode(item).count + 1
            if bytes <= batchBytes {
                sized.append((item, bytes))
            } else {
                tooLarge.append(SecretServiceSkip(what: item.displayName, why: "too large for Tresor (\(bytes) bytes; a secret is at most 256 KiB)"))
            }
        }
        let batches = requestBatches(sized, maxCount: batchItems, maxBytes: batchBytes) { $0.bytes }
        return (batches.map { $0.map(\.item) }, tooLarge)
    }
}

/// What `tresor import secret-service` did (`--json`): where the items went, each copied item
/// with its new id, and everything not copied with the reason.
struct SecretServiceImportOutput: Encodable {
    var provider: String
    /// The access group the items went to (nil when there was nothing to send).
    var group: String?
    var copied: [SecretServiceImportResponse.Copied]
    var skipped: [SecretServiceSkip]

    func printReport() {
        for item in copied { print("Copied \(item.what) as item \(item.id).") }
        for skip in skipped { print("Skipped \(skip.what): \(skip.why).") }
        print("Copied \(Words.counted(copied.count, "item")) (\(skipped.count) skipped).")
        guard let group, !copied.isEmpty else { return }
        if group == ExecutableGroup.imported {
            print("They are in \(group), which no program sees until you allow one: tresor secret-service allow --exe PATH --group \(group)")
        } else {
            print("They belong to \(group).")
        }
    }
}
