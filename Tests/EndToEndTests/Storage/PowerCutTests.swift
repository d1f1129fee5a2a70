import Foundation
import Synchronization
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The crash tests again, with the home on a ``PowerCutDisk`` whose power is cut with every kill:
/// what the daemon acknowledged must have been synced — database commits, attachment files,
/// atomically replaced files and the folders that name them (docs/SECURITY.md, "Durability").
///
/// Every write path: item add, update, delete, passcode change, note new, edit, lock, attach,
/// delete, passphrase change (the crash driver's operations); backup restore; a web client's note
/// save. After each cut every acknowledged operation is there, nothing half-written is visible,
/// both databases pass `PRAGMA integrity_check`, and the daemon starts.
///
/// `TRESOR_POWER_CUT_SEED=<seed>` replays the driver's decisions (the seed is printed);
/// `TRESOR_POWER_CUTS=<n>` sets the driver's number of cuts (10 by default, ~7 s each here
/// with the machine loaded; the whole suite ~2.5 min).
@Suite(.blocksItsThread, .serialized, .enabled(if: PowerCutDisk.isAvailable, "needs /dev/fuse, python3-fusepy and root"))
struct PowerCutTests {
    static let environment = ProcessInfo.processInfo.environment

    @Test(.enabled(if: CrashDriver.sqlite != nil, "needs sqlite3 for the integrity checks"))
    func everyAcknowledgedKeychainAndNotesOperationSurvivesAPowerCut() throws {
        let cuts = Self.environment["TRESOR_POWER_CUTS"].flatMap { Int($0) } ?? 10
        let seed = Self.environment["TRESOR_POWER_CUT_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        print("PowerCutTests: seed \(seed) (replay with TRESOR_POWER_CUT_SEED=\(seed)), \(cuts) power cuts")
        let driver = try CrashDriver(seed: seed, powerCut: true)
        defer { print(driver.summary) }
        try driver.run(kills: cuts)
        #expect(driver.harness.disk?.cuts == cuts)
        let leftovers = try driver.temporaryFilesInHome()
        #expect(leftovers.isEmpty, "temporary files left in the home after \(cuts) power cuts (seed \(seed)): \(leftovers)")
    }

    /// A restore cut at random moments (half of them once its commit marker is written): the home
    /// is the old one or the fully restored one, and an acknowledged restore is whole.
    @Test func aRestoreCutByAPowerLossLeavesTheHomeUntouchedOrFullyRestored() throws {
        let source = try BackupHome()
        for index in 0..<20 {
            try expectSucceeded(
                source.harness.tresor(
                    ["item", "add", "--service", "pc.restore.\(index)", "--account", "ada", "--secret-stdin"], input: source.marked("secret")))
        }
        for index in 0..<6 { try source.newNote("note-\(index)") }
        try source.attach("big-0", to: try #require(source.noteIDs["note-0"]), kind: "file", size: 2_000_000)
        let file = source.harness.root.appendingPathComponent("power-cut.tresor-backup")
        _ = try source.backup(to: file)
        let backedUpItems = Set(try source.harness.json([KeychainItem].self, ["item", "find"]).map(\.id))
        let backedUpNotes = Set(try source.notes().values.map(\.id))

        var outcomes: [String: Int] = [:]
        for round in 0..<4 {
            let target = try CrashTarget(passphrase: source.backupPassphrase, secrets: source.harness.secrets, powerCut: true)
            // What `CrashTarget` made before the restore was acknowledged: it must survive too.
            let untouched = try target.state()
            let full = (items: untouched.items.union(backedUpItems), notes: untouched.notes.union(backedUpNotes))
            let window = try target.restoreWindow(file)
            let atCommit = round % 2 == 1
            let delay = atCommit ? Double.random(in: 0...0.004) : Double.random(in: 0...window)
            let result = try target.restoreKillingTheDaemon(file, after: delay, atCommit: atCommit)
            try target.daemon.start()
            let restored = try target.expectRestoredOrUntouched(
                untouched: untouched, full: full, acknowledged: result.succeeded, source: source,
                "round \(round), power cut \(String(format: "%.3f", delay)) s in")
            try expectIntact(target.harness)
            outcomes[result.succeeded ? "acknowledged" : restored ? "completed after the restart" : "untouched", default: 0] += 1
        }
        print("PowerCutTests: 4 power cuts during restores: \(outcomes.sorted { $0.key < $1.key })")
    }

    /// A web client saving a note (creates and edits through the web API) while the power is cut:
    /// every save answered 200/201 is there after the restart, with its body.
    @Test func everyAcknowledgedWebNoteSaveSurvivesAPowerCut() throws {
        let harness = try Harness(onPowerCutDisk: true)
        let passcode = "pc-web-passcode-\(UUID().uuidString.prefix(6))", password = "pc-web-password-\(UUID().uuidString.prefix(6))"
        var server = try harness.startWebDaemon(passcode: passcode)
        harness.secrets.append(password)
        var browser = WebBrowser(server)
        #expect(try browser.register("ada", password).status == 201)
        /// Note id → the bodies it may have (one once known; two while a cut save is unresolved).
        var bodies: [String: Set<String>] = [:]
        var saves = 0, racing = 0, racingAcknowledged = 0
        for cut in 0..<6 {
            // A few saves, answered before the cut: all of them must survive it.
            for _ in 0..<Int.random(in: 1...3) {
                let body = "pc-web-body-\(saves)-\(UUID().uuidString.prefix(6))"
                saves += 1
                if let id = bodies.keys.randomElement(), Bool.random() {
                    let edited = try browser.patch("/api/notes/\(id)", ["body": body])
                    try #require(edited.status == 200, "edit: \(edited.text)")
                    bodies[id] = [body]
                } else {
                    bodies[try browser.createNote(title: "pc-web-\(saves)", body: body)] = [body]
                }
            }
            // One save racing the cut.
            let id = try #require(bodies.keys.randomElement())
            let body = "pc-web-racing-\(cut)-\(UUID().uuidString.prefix(6))"
            let answer = Mutex<Int?>(nil)
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) let racer = browser
            DispatchQueue.global().async {
                let status = try? racer.patch("/api/notes/\(id)", ["body": body]).status
                answer.withLock { $0 = status }
                done.signal()
            }
            usleep(useconds_t.random(in: 0...150_000))
            harness.killDaemon()
            try #require(harness.disk != nil)
            try harness.disk!.cutPower()
            done.wait()
            racing += 1
            if answer.withLock({ $0 }) == 200 {
                bodies[id] = [body]
                racingAcknowledged += 1
            } else {
                bodies[id, default: []].insert(body)
            }

            server = try harness.startWebDaemon(passcode: passcode)
            try expectSucceeded(harness.tresor(["unlock", "--passcode-stdin"], input: passcode + "\n"))
            browser = WebBrowser(server)
            #expect(try browser.signIn("ada", password).status == 200)
            for (id, possible) in bodies {
                let shown = try browser.get("/api/notes/\(id)")
                try #require(shown.status == 200, "an acknowledged note is gone after power cut \(cut): \(shown.text)")
                let found = try #require(shown.json?["body"] as? String)
                #expect(possible.contains(found), "after power cut \(cut) the note's body is \(found), not one of \(possible.sorted())")
                bodies[id] = [found]
            }
            try expectIntact(harness)
        }
        print("PowerCutTests: web note saves: \(saves) before cuts, \(racing) racing a cut (\(racingAcknowledged) acknowledged)")
    }

    /// Every database in the home passes `PRAGMA integrity_check`.
    func expectIntact(_ harness: Harness, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (checked, failures) = try harness.checkDatabaseIntegrity()
        #expect(failures.isEmpty, "\(failures)", sourceLocation: sourceLocation)
        #expect(checked >= 2, "the keychain and notes databases were checked", sourceLocation: sourceLocation)
    }
}
