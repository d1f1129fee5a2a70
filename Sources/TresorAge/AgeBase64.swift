import Foundation

/// age's Base64: the standard alphabet, no padding, and only the canonical encoding (a
/// decoder must refuse strings whose unused low bits are set, so one value has one spelling
/// and the header MAC covers exactly what was meant).
enum AgeBase64 {
    static func encode(_ bytes: Data) -> String {
        var text = bytes.base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// The bytes `text` spells, or nil when it is not canonical unpadded Base64.
    static func decode(_ text: Substring) -> Data? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "/") }) else { return nil }
        guard text.count % 4 != 1 else { return nil }
        let padded = String(text) + String(repeating: "=", count: (4 - text.count % 4) % 4)
        guard let bytes = Data(base64Encoded: padded), encode(bytes) == text else { return nil }
        return bytes
    }
}
