import Foundation
import Hummingbird
import Logging
import Synchronization
import TresorBackup
import TresorCrypto
import TresorKeybag
import TresorKeychain
import TresorNotes
import TresorProtocol
import TresorSystem
import TresorWebServer

/// `tresor backup create|verify|restore` (docs/API.md, "Backups"). The daemon writes and reads
/// the backup file itself at the path the CLI names — it holds the keys, and the file streams
/// through it a chunk at a time. A backup exports every secret and a restore changes every item,
/// so both need the user present: the passcode in the request, or a CLI session that proved it
/// (``TresorKeychain/Caller/confirmPresence(with:)``). Verifying a file reads only the file.
/// One of them runs at a time; the log names the operation and its counts, never a path's
/// content, a title or a secret.
struct BackupRoutes {
    let slot: KeybagSlot
    let keychains: KeychainProvider
    let notes: NotesProvider
    let callers: CallerResolver
    let autoLock: AutoLock
    /// The Secret Service's table of generic clients: a restore gives none another application's groups.
    let genericClients: GenericClients
    let progress = BackupProgressTracker()
    private let gate = BackupGate()

    init(
        slot: KeybagSlot, keychains: KeychainProvider, notes: NotesProvider, callers: CallerResolver, autoLock: AutoLock,
        genericClients: GenericClients
    ) {
        self.slot = slot
        self.keychains = keychains
        self.notes = notes
        self.callers = callers
        self.autoLock = autoLock
        self.genericClients = genericClients
    }

    func register(on router: Router<DaemonRequestContext>) {
        router.post(RouterPath(Route.backupCreate)) { request, context -> BackupReport in
            var decoded = try await request.decode(as: BackupCreateRequest.self, context: context)
            let caller = try self.caller(context, passcode: try Passcode.taking(&decoded.passcode))
            let passphrase = try Self.passphrase(SecretText.taking(&decoded.passphrase))
            let body = decoded
            let url = try Self.file(body.path, outsideOf: slot.paths.home)
            let workFactor = body.workFactor ?? BackupCreation.defaultWorkFactor
            let workFactors = BackupCreation.workFactors
            guard workFactors.contains(workFactor) else {
                throw APIError(.param, "the work factor is log2(N), \(workFactors.lowerBound) to \(workFactors.upperBound)")
            }
            let home = slot.paths.home
            let report = try await exclusively(context, "create") {
                let keybag = try unlockedKeybag()
                // A home that cannot take the name (read-only) still backs up.
                try? UnfinishedBackup.begin(url, home: home)
                defer { UnfinishedBackup.end(home: home) }
                return try BackupCreation.create(
                    source(keybag), to: url, passphrase: passphrase, workFactor: workFactor,
                    presence: { try caller.confirmPresence(with: keybag) }, progress: progress)
            }
            context.logger.notice("backup created", metadata: Self.counts(report))
            return report
        }
        router.post(RouterPath(Route.backupVerify)) { request, context -> BackupReport in
            var decoded = try await request.decode(as: BackupVerifyRequest.self, context: context)
            let passphrase = try Self.passphrase(SecretText.taking(&decoded.passphrase))
            let body = decoded
            try callers.requireCLI(try context.requireClient(), toManage: "backups")
            let url = try Self.file(body.path)
            let report = try await exclusively(context, "verify") { try BackupRestore.verify(from: url, passphrase: passphrase, progress: progress) }
            context.logger.notice("backup verified", metadata: Self.counts(report))
            return report
        }
        router.post(RouterPath(Route.backupRestore)) { request, context -> BackupReport in
            var decoded = try await request.decode(as: BackupRestoreRequest.self, context: context)
            let caller = try self.caller(context, passcode: try Passcode.taking(&decoded.passcode))
            let passphrase = try Self.passphrase(SecretText.taking(&decoded.passphrase))
            let body = decoded
            let url = try Self.file(body.path)
            let dryRun = body.dryRun ?? false
            let report = try await exclusively(context, dryRun ? "dry run" : "restore") {
                let keybag = try unlockedKeybag()
                return try BackupRestore.restore(
                    from: url, passphrase: passphrase, into: target(keybag), onConflict: body.onConflict ?? .skip,
                    consent: body.consent ?? .none, genericClients: genericClients, dryRun: dryRun,
                    everyEntry: body.everyEntry ?? true, presence: { try caller.confirmPresence(with: keybag) }, progress: progress)
            }
            context.logger.notice(dryRun ? "backup restore rehearsed" : "backup restored", metadata: Self.counts(report))
            return report
        }
        router.post(RouterPath(Route.backupProgress)) { _, context -> BackupProgress in
            try callers.requireCLI(try context.requireClient(), toManage: "backups")
            return progress.current
        }
    }

    /// The CLI as a keychain caller, with the passcode it sent.
    private func caller(_ context: DaemonRequestContext, passcode: Passcode?) throws -> Caller {
        let client = try context.requireClient()
        try callers.requireCLI(client, toManage: "backups")
        return try callers.caller(for: client, passcode: passcode, keychain: nil)
    }

    /// Runs `body` off the event loop, unless another backup operation runs; logs a failure's code.
    /// Auto-lock is held meanwhile (`tresor status` shows why): a restore that outlasts the idle
    /// time must not lose its class keys halfway.
    private func exclusively(
        _ context: DaemonRequestContext, _ operation: String, _ body: @escaping @Sendable () throws -> BackupReport
    ) async throws -> BackupReport {
        guard gate.enter() else { throw BackupError.busy }
        defer { gate.leave() }
        // A client that goes away (Ctrl-C, killed) wants none of it: no backup file of every
        // secret written after all, no restore committed after "cancel".
        let admitted = progress.admit()
        context.channel.closeFuture.whenComplete { [progress] _ in progress.cancel(admitted) }
        let client = try context.requireClient()
        let hold = autoLock.addHold(reason: "tresor backup: \(operation) running", client: client.description, connection: client.connection)
        defer {
            _ = autoLock.removeHold(id: hold.id, connection: client.connection)
            autoLock.touch(by: "tresor backup \(operation)")  // the idle period starts when the operation ends
        }
        let pid = "\(client.credentials.pid)"
        return try await loggedOutcome(
            "backup: \(operation)", logger: context.logger, metadata: ["pid": "\(pid)"], errorCode: { ErrorMiddleware.apiError(for: $0).code }
        ) {
            try await offloaded(body)
        }
    }

    /// The login keybag, which must be unlocked: a backup reads and a restore seals every class.
    private func unlockedKeybag() throws -> Keybag {
        let keybag = try slot.keybag()
        guard keybag.lockState == .unlocked else {
            throw BackupError.homeUnavailable("the keybag is locked: unlock it first (tresor unlock)")
        }
        return keybag
    }

    /// The whole home, as a backup reads it.
    private func source(_ keybag: Keybag) throws -> BackupSource {
        let login = try keychains.loginKeychain()
        var all: [(name: String, keychain: KeychainStore)] = [(KeychainName.login, login)]
        for name in keychains.createdNames() { all.append((name, try keychains.keychain(named: name))) }
        return BackupSource(keybag: keybag, keychains: all, notes: try notes.store())
    }

    /// The home, as a restore writes into it.
    private func target(_ keybag: Keybag) throws -> RestoreTarget {
        let login = try keychains.loginKeychain()
        let keychains = self.keychains
        let home = slot.paths.home
        return RestoreTarget(
            home: home, keybag: keybag,
            keychain: { name in
                guard name == KeychainName.login || keychains.createdNames().contains(name) else { return nil }
                return try keychains.keychain(named: name)
            },
            databasePath: { name in
                let url = name == KeychainName.login ? keychains.paths.loginKeychain : KeychainProvider.database(name, keychains.paths)
                return String(url.path.dropFirst(home.path.count + 1))
            },
            applications: login.applications, notes: try notes.store())
    }

    /// An absolute path; for a new backup, outside the home (a backup inside it would be copied
    /// with the home, and the home must hold only its own files).
    private static func file(_ path: String, outsideOf home: URL? = nil) throws -> URL {
        guard path.hasPrefix("/"), !path.contains("\0"), path.utf8.count <= 4096 else { throw APIError(.param, "the backup's path must be absolute") }
        let url = URL(fileURLWithPath: path).standardizedFileURL
        if let home, url.path == home.path || url.path.hasPrefix(home.path + "/") {
            throw APIError(.param, "write the backup outside the Tresor home")
        }
        // Before any work: a folder given as the file would fail only at the end, at the rename.
        if home != nil, SecureFiles.isDirectory(url) {
            throw APIError(.param, "\(url.path) is a folder: give the backup file's path (\(url.path)/tresor.backup, say)")
        }
        return url
    }

    private static func passphrase(_ text: SecretText) throws -> SecretText {
        guard text.byteCount > 0 else { throw APIError(.param, "the backup passphrase is empty") }
        guard text.byteCount <= 4096 else { throw APIError(.param, "the backup passphrase is longer than 4096 bytes") }
        return text
    }

    private static func counts(_ report: BackupReport) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["bytes": "\(report.bytes)"]
        for (kind, outcomes) in report.counts.sorted(by: { $0.key < $1.key }) {
            metadata[kind] = "\(outcomes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))"
        }
        return metadata
    }
}

extension BackupReport: ResponseEncodable {}
extension BackupProgress: ResponseEncodable {}
