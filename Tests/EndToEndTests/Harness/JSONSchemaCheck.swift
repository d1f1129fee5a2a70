import Foundation

/// A JSON value, decoded strictly: a number is never a boolean, nor the reverse.
enum JSONTree: Decodable, Equatable {
    case null, bool(Bool), integer(Int64), number(Double), string(String), array([JSONTree]), object([String: JSONTree])

    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        if value.decodeNil() {
            self = .null
        } else if let bool = try? value.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? value.decode(Int64.self) {
            self = .integer(integer)
        } else if let number = try? value.decode(Double.self) {
            self = .number(number)
        } else if let string = try? value.decode(String.self) {
            self = .string(string)
        } else if let array = try? value.decode([JSONTree].self) {
            self = .array(array)
        } else {
            self = .object(try value.decode([String: JSONTree].self))
        }
    }

    init(parsing data: Data) throws { self = try JSONDecoder().decode(JSONTree.self, from: data) }

    subscript(key: String) -> JSONTree? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    var string: String? { if case .string(let string) = self { return string }; return nil }
}

/// Checks a JSON value against the subset of JSON Schema that docs/cli-json.schema.json uses:
/// `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`, `$ref` to
/// `#/$defs/…`, `format: date-time` (ISO 8601 in UTC, as the CLI writes it) and
/// `contentEncoding: base64`.
struct JSONSchemaCheck {
    let root: JSONTree

    init(file: URL) throws { root = try JSONTree(parsing: Data(contentsOf: file)) }

    /// The schema the document names for `command`'s output.
    func schema(forCommand command: String) -> JSONTree? { root["commands"]?[command] }

    var commands: [String] {
        guard case .object(let commands)? = root["commands"] else { return [] }
        return commands.keys.sorted()
    }

    /// Every way `value` breaks `schema`, each with its path; empty when it conforms.
    func violations(of value: JSONTree, against schema: JSONTree, at path: String = "$") -> [String] {
        if let reference = schema["$ref"]?.string {
            guard let target = root["$defs"]?[String(reference.dropFirst("#/$defs/".count))] else { return ["\(path): unknown \(reference)"] }
            return violations(of: value, against: target, at: path)
        }
        var found: [String] = []
        if case .array(let allowed)? = schema["enum"], !allowed.contains(value) {
            found.append("\(path): \(value) is not one of the documented values")
        }
        switch (schema["type"]?.string, value) {
        case ("object"?, .object(let object)):
            guard case .object(let properties)? = schema["properties"] ?? .object([:]) else { break }
            if case .array(let required)? = schema["required"] {
                for case .string(let name) in required where object[name] == nil { found.append("\(path): \(name) is missing") }
            }
            for (name, inner) in object {
                if let property = properties[name] {
                    found += violations(of: inner, against: property, at: "\(path).\(name)")
                } else if let additional = schema["additionalProperties"], case .object = additional {
                    found += violations(of: inner, against: additional, at: "\(path).\(name)")
                } else if schema["additionalProperties"] == .bool(false) {
                    found.append("\(path): \(name) is not documented")
                }
            }
        case ("array"?, .array(let array)):
            if let items = schema["items"] {
                for (index, inner) in array.enumerated() { found += violations(of: inner, against: items, at: "\(path)[\(index)]") }
            }
        case ("string"?, .string(let string)):
            if schema["format"]?.string == "date-time",
                string.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$"#, options: .regularExpression) == nil
            {
                found.append("\(path): \(string) is not an ISO 8601 date")
            }
            if schema["contentEncoding"]?.string == "base64", Data(base64Encoded: string) == nil { found.append("\(path): not base64") }
        case ("integer"?, .integer), ("boolean"?, .bool), (nil, _):
            break
        case (let type?, _):
            found.append("\(path): \(value) is not of type \(type)")
        }
        return found
    }
}
