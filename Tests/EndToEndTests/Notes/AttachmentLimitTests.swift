import Foundation
import Testing
import TresorKit
import TresorProtocol
import TresorTestSupport

/// The largest attachment a home takes is `notesAttachmentBytes` of its `config.json` (4 GiB
/// unless set; docs/SYNC.md, "Attachments"): one byte over it, `tresor note attach` is refused
/// with a clear error and the note keeps what it had; at it, the attachment is added.
@Suite(.blocksItsThread, .serialized) struct AttachmentLimitTests {
    @Test func anAttachmentOverTheConfiguredLimitIsRefusedAndOneAtItIsAdded() throws {
        let harness = try Harness()
        harness.secrets = [AttachmentStreamingTests.passcode]
        try harness.mergeConfiguration(["notesAttachmentBytes": 1 << 20])
        try harness.startDaemon()
        #expect(try harness.tresor(["init", "--passcode-stdin"], input: AttachmentStreamingTests.passcode + "\n").succeeded)
        let note = try harness.json(NoteSummary.self, ["note", "new", "--title", "Film", "--body-stdin"], input: "short")
        let file = harness.root.appendingPathComponent("film.bin")

        try Data(count: (1 << 20) + 1).write(to: file)
        let refused = try harness.tresor(["note", "attach", note.id, "--kind", "file", "--file", file.path])
        #expect(!refused.succeeded)
        #expect((refused.stdout + refused.stderr).contains("larger than \(1 << 20) bytes"), "\(refused.stdout) \(refused.stderr)")
        #expect(try harness.json(OpenedNote.self, ["note", "show", note.id]).attachments.isEmpty)

        try Data(count: 1 << 20).write(to: file)
        let added = try harness.tresor(["note", "attach", note.id, "--kind", "file", "--file", file.path])
        #expect(added.succeeded, "\(added.stderr)")
        #expect(try harness.json(OpenedNote.self, ["note", "show", note.id]).attachments.map(\.byteCount) == [1 << 20])
    }
}
