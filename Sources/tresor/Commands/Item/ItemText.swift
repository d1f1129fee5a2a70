import FoundationEssentials
import TresorKit
import TresorModel
import TresorProtocol

/// An item's attributes as text. Attributes are whatever the program that stored the item chose
/// (a Secret Service client's label, say): each is shown with its control and formatting
/// characters as `?` (``TerminalText``), so that none draws on the terminal.
struct ItemText {
    let item: KeychainItem
    init(_ item: KeychainItem) { self.item = item }

    /// One line: the class, the id and the attributes that tell items apart.
    var identifying: String {
        (["\(item.itemClass.humanName) \(item.id)"] + (item.attributes?.identifying ?? []).map { TerminalText.printable($0) })
            .joined(separator: "  ")
    }

    /// The class and id, then one attribute a line; names of values (protection classes,
    /// access control) in words.
    var rendered: String {
        var lines = ["\(item.itemClass.humanName) \(item.id)"]
        if let attributes = item.attributes {
            let data = (try? Output.encoder.encode(attributes)) ?? Data()
            let values = (try? JSONDecoder().decode([String: AttributeText].self, from: data)) ?? [:]
            for key in values.keys.sorted() {
                let text = TerminalText.printable(Self.readable(key, of: attributes) ?? values[key]!.text)
                lines.append("  \(key): \(["accessible", "accessControl"].contains(key) ? Words.of(text) : text)")
            }
        }
        if let secret = item.secret { lines.append("  secret: \(String(data: secret, encoding: .utf8) ?? "<\(secret.count) bytes>")") }
        return lines.joined(separator: "\n")
    }

    /// A bytes attribute that holds text — a Secret Service item's content type in `generic`,
    /// a key's application tag — as that text; nil for any other attribute, or bytes that are
    /// not text (those are shown in base64, as `--json` gives every bytes attribute).
    private static func readable(_ name: String, of attributes: ItemAttributes) -> String? {
        guard case .bytes(let value, _)? = ItemAttribute.all.first(where: { $0.name == name })?.value, let bytes = value(attributes),
            let text = String(validating: bytes, as: UTF8.self), !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        return text
    }
}

/// An attribute's JSON value as a person reads it: strings, numbers and booleans as they are,
/// maps (`custom`) as sorted key=value lists.
struct AttributeText: Decodable {
    let text: String

    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        if let bool = try? value.decode(Bool.self) {
            text = "\(bool)"
        } else if let integer = try? value.decode(Int64.self) {
            text = "\(integer)"
        } else if let string = try? value.decode(String.self) {
            text = string
        } else {
            let map = try value.decode([String: String].self)
            text = map.keys.sorted().map { "\($0)=\(map[$0]!)" }.joined(separator: ", ")
        }
    }
}

/// An item as `--json` prints it (docs/CLI-JSON.md): its id, class and attributes, and — when
/// it was asked for — the secret as text when it is valid UTF-8 (`secret`), and always in
/// base64 (`secretBase64`).
struct ItemJSON: Encodable {
    let item: KeychainItem

    init(_ item: KeychainItem) { self.item = item }

    private enum Keys: String, CodingKey { case id, itemClass, attributes, secret, secretBase64 }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(item.id, forKey: .id)
        try container.encode(item.itemClass, forKey: .itemClass)
        try container.encodeIfPresent(item.attributes, forKey: .attributes)
        if let secret = item.secret {
            let shown = SecretJSON(secret)
            try container.encodeIfPresent(shown.text, forKey: .secret)
            try container.encode(shown.base64, forKey: .secretBase64)
        }
    }
}

/// A secret as `--json` prints it (docs/CLI-JSON.md): as text when it is valid UTF-8
/// (`secret`), and always in base64 (`secretBase64`).
struct SecretJSON {
    let text: String?
    let base64: String

    init(_ secret: Data) {
        text = String(validating: secret, as: UTF8.self)
        base64 = secret.base64EncodedString()
    }
}

/// A secret as printed without `--json`: its bytes exactly, for a pipe or a file; on a
/// terminal, with a line end after it, so that the prompt does not follow it on its line (as
/// `secret-tool lookup` does).
enum SecretOutput {
    static func write(_ secret: Data) {
        StandardStream.output.write(secret)
        if StandardStream.output.isTerminal { StandardStream.output.write("\n") }
    }
}
