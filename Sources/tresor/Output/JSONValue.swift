import FoundationEssentials
import TresorProtocol

/// Any JSON value, to reshape an answer the daemon's types encode before the CLI prints it.
enum JSONValue: Codable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

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
        } else if let array = try? value.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try value.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var value = encoder.singleValueContainer()
        switch self {
        case .null: try value.encodeNil()
        case .bool(let bool): try value.encode(bool)
        case .integer(let integer): try value.encode(integer)
        case .number(let number): try value.encode(number)
        case .string(let string): try value.encode(string)
        case .array(let array): try value.encode(array)
        case .object(let object): try value.encode(object)
        }
    }

    /// `value` as the CLI's encoder writes it, as a tree.
    init<T: Encodable>(encoding value: T) throws {
        self = try JSONDecoder().decode(JSONValue.self, from: try Output.encoder.encode(value))
    }
}

/// A value whose `--json` form is reshaped from what its types encode: dates the daemon's API sends
/// as seconds since 1970 are printed as ISO 8601, like every other date the CLI prints.
protocol ReshapedForJSON: Encodable {
    /// The value as `--json` prints it.
    var cliJSON: JSONValue { get throws }
}

extension DaemonStatus: ReshapedForJSON {
    /// As `--json` prints it: the status's dates in ISO 8601 (``JSONValue/withStatusDates``).
    var cliJSON: JSONValue {
        get throws { try JSONValue(encoding: self).withStatusDates }
    }
}

extension JSONValue {
    /// This object with the dates a daemon status holds as seconds since 1970 — each hold's
    /// `since`, each terminal session's `expires`, `lockedAt`, `unlockedAt`, the login link's dates and the last
    /// unanswered prompt's `at` — written as ISO 8601 dates (those absent stay absent). For
    /// `tresor status` and for `tresor daemon status`, which repeats some of its fields.
    var withStatusDates: JSONValue {
        guard case .object(var object) = self else { return self }
        for (list, field) in [("holds", "since"), ("terminalSessions", "expires")] {
            guard case .array(let entries)? = object[list] else { continue }
            object[list] = .array(entries.map { Self.withDate(field, in: $0) })
        }
        if let link = object["loginLink"] { object["loginLink"] = Self.withDate("staleSince", in: Self.withDate("linkedAt", in: link)) }
        if case .object(var serving)? = object["serving"], let dismissed = serving["lastPromptNobodyAnswered"] {
            serving["lastPromptNobodyAnswered"] = Self.withDate("at", in: dismissed)
            object["serving"] = .object(serving)
        }
        return Self.withDate("unlockedAt", in: Self.withDate("lockedAt", in: .object(object)))
    }

    /// `entry` with its `field` in seconds since 1970 written as an ISO 8601 date.
    private static func withDate(_ field: String, in entry: JSONValue) -> JSONValue {
        guard case .object(var fields) = entry, let seconds = fields[field] else { return entry }
        let value: Double? =
            switch seconds {
            case .integer(let integer): Double(integer)
            case .number(let number): number
            default: nil
            }
        if let value { fields[field] = .string(Date(timeIntervalSince1970: value).formatted(.iso8601)) }
        return .object(fields)
    }
}
