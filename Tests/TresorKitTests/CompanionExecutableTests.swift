import Foundation
import Testing
import TresorKit

/// Which `tresord` TresorKit starts when no daemon answers: the one beside the running program,
/// else the first executable one on `PATH` — never a file it may not execute, never one further
/// down `PATH` (docs/SECURITY.md, "Applications using TresorKit").
@Suite struct CompanionExecutableTests {
    /// Three folders, each with what `files` puts there: a name and whether it is executable.
    final class Folders {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tresor-companion-\(UUID().uuidString)")
        func folder(_ name: String, _ files: [String: Bool]) throws -> String {
            let folder = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (file, executable) in files {
                let path = folder.appendingPathComponent(file).path
                #expect(FileManager.default.createFile(atPath: path, contents: Data("#!/bin/sh\n".utf8)))
                try FileManager.default.setAttributes([.posixPermissions: executable ? 0o755 : 0o644], ofItemAtPath: path)
            }
            return folder.path
        }
        deinit { try? FileManager.default.removeItem(at: root) }
    }

    @Test func theDaemonBesideTheProgramComesBeforeAnyOnThePath() throws {
        let folders = Folders()
        let beside = try folders.folder("app", ["tresord": true])
        let early = try folders.folder("early", ["tresord": true])
        #expect(CompanionExecutable.path("tresord", besides: beside, searchPath: early) == beside + "/tresord")
    }

    @Test func withoutOneBesideTheFirstExecutableOnThePathIsChosen() throws {
        let folders = Folders()
        let beside = try folders.folder("app", ["tresor": true])
        let plainFile = try folders.folder("plain", ["tresord": false])
        let first = try folders.folder("first", ["tresord": true])
        let later = try folders.folder("later", ["tresord": true])
        let searchPath = [folders.root.appendingPathComponent("missing").path, plainFile, first, later].joined(separator: ":")
        #expect(CompanionExecutable.path("tresord", besides: beside, searchPath: searchPath) == first + "/tresord")
        #expect(CompanionExecutable.path("tresord", besides: nil, searchPath: searchPath) == first + "/tresord")
    }

    @Test func noExecutableAnywhereIsNone() throws {
        let folders = Folders()
        let beside = try folders.folder("app", ["tresord": false])
        let plainFile = try folders.folder("plain", ["tresord": false])
        #expect(CompanionExecutable.path("tresord", besides: beside, searchPath: plainFile) == nil)
        #expect(CompanionExecutable.path("tresord", besides: nil, searchPath: nil) == nil)
        #expect(CompanionExecutable.path("tresord", besides: nil, searchPath: "") == nil)
    }
}
