import FoundationEssentials
import Testing
import TresorModel

@testable import tresor

/// `tresor item find` as text: what a person reads of each attribute.
@Suite struct ItemTextTests {
    /// A Secret Service item keeps its content type in the bytes attribute `generic`: it reads as
    /// the text it is; bytes that are no text stay base64, as `--json` gives them.
    @Test func bytesThatAreTextAreShownAsText() {
        var attributes = ItemAttributes()
        attributes.label = "x"
        attributes.generic = Data("text/plain".utf8)
        attributes.applicationTag = Data([0x00, 0xFF, 0x0A])
        let shown = ItemText(KeychainItem(id: "1", itemClass: .genericPassword, attributes: attributes, secret: nil)).rendered
        #expect(shown.contains("  generic: text/plain"), "\(shown)")
        #expect(shown.contains("  applicationTag: AP8K"), "not text: base64 \(shown)")
        var escaping = ItemAttributes()
        escaping.generic = Data("text/plain\u{1b}[2J".utf8)
        let drawn = ItemText(KeychainItem(id: "2", itemClass: .genericPassword, attributes: escaping, secret: nil)).rendered
        #expect(!drawn.contains("\u{1b}"), "a control character must not reach the terminal: \(drawn)")
    }
}
