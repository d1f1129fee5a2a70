import Testing
import TresorNotesDomain

/// Whom a conflict copy says it is from (``NoteRules/conflictCopyEditor(login:device:isOwner:)``):
/// an edit made in a browser names its account; an edit a device synced names the device — after
/// the account when it is another account's, a participant's.
struct ConflictCopyNameTests {
    @Test func aBrowsersEditNamesItsAccount() {
        #expect(NoteRules.conflictCopyEditor(login: "bob", device: nil, isOwner: false) == "bob")
        #expect(NoteRules.conflictCopyTitle("List", editorName: "bob") == "List (conflict copy from bob)")
    }

    @Test func theOwnersDevicesAreToldApart() {
        #expect(NoteRules.conflictCopyEditor(login: "ada", device: "Laptop", isOwner: true) == "Laptop")
    }

    @Test func aParticipantsDeviceNamesTheParticipantToo() {
        #expect(NoteRules.conflictCopyEditor(login: "bob", device: "Desktop", isOwner: false) == "bob on Desktop")
    }
}
