import Testing
import TresorModel

/// Names others see later (a device, an attachment, a hold's reason) are refused when they would
/// be drawn other than as written.
@Suite struct TerminalTextTests {
    @Test(arguments: [
        "evil\nsecond line", "tab\there", "escape\u{1b}[2K", "carriage\rreturn", "nul\u{0}byte",
        "invoice\u{202E}fdp.exe", "isolate\u{2067}x\u{2069}", "mark\u{200F}", "arabic mark\u{061C}",
        "line\u{2028}separator", "paragraph\u{2029}separator",
    ])
    func aNameThatDrawsOtherwiseIsRefused(_ name: String) {
        #expect(!TerminalText.isOneLineAsWritten(name))
    }

    @Test(arguments: [
        "Alice's laptop", "Urlaub 2026.jpg", "👩‍💻 work", "❤️ notes", "🏴󠁧󠁢󠁳󠁣󠁴󠁿 flag", "日本語のメモ", "שלום", "عربي", "x\u{00AD}y",
    ])
    func emojiSequencesAndOtherScriptsPass(_ name: String) {
        #expect(TerminalText.isOneLineAsWritten(name))
    }

    @Test func printableShowsNoDirectionControl() {
        #expect(TerminalText.printable("invoice\u{202E}fdp.exe") == "invoice?fdp.exe")
    }
}
