import Testing
import TresorSystem

@Suite("Trimming")
struct TrimmingTests {
    @Test func whitespaceGoesFromBothEndsOnly() {
        #expect(" \t 4242 \n".trimmingWhitespace() == "4242")
        #expect("a b".trimmingWhitespace() == "a b")
        #expect(" \t\n ".trimmingWhitespace() == "")
        #expect("".trimmingWhitespace() == "")
        #expect("TracerPid:\t0"[...].dropFirst("TracerPid:".count).trimmingWhitespace() == "0")
    }

    @Test func anyCharactersCanBeTrimmed() {
        #expect("New passcode: ".trimming { $0 == ":" || $0 == " " } == "New passcode")
        #expect("::".trimming { $0 == ":" } == "")
    }
}
