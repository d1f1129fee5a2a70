import Foundation

// What Tests/Fixtures/SecretService/raw_dbus.py prints, one type per command.

/// One D-Bus call's outcome: its answer, or the name of the error it got.
struct Outcome<Answer: Decodable>: Decodable {
    var ok: Answer?
    var error: String?

    var failed: Bool { error != nil }
}

/// Any JSON, unread: for answers whose shape does not matter, only whether they were errors.
struct Ignored: Decodable {
    init(from decoder: any Decoder) throws {}
}

struct PropertiesAnswer: Decodable {
    struct Collection: Decodable {
        var label: Outcome<String>
        var locked: Outcome<Bool>
        var items: Outcome<[String]>
        var created: Outcome<UInt64>
    }

    var collections: [String]
    var defaultAlias: String
    var collection: [String: Collection]
}

struct ForeignSessionAnswer: Decodable {
    var itemsFound: Int
    var getSecrets: Outcome<Int>
    var getSecret: Outcome<Int>
    var setSecret: Outcome<Ignored>
    var createItem: Outcome<Ignored>
    var close: Outcome<Ignored>
    var ownerAfterwards: Outcome<Int>
    var ownSession: Outcome<Int>
}

struct ItemStateAnswer: Decodable {
    struct Item: Decodable {
        var locked: Outcome<Bool>
        var collectionLocked: Outcome<Bool>
        var getSecret: Outcome<Int>
    }

    var unlocked: [String]
    var locked: [String]
    var items: [String: Item]
}

struct LockAnswer: Decodable {
    var locked: [String]
    var prompt: String
}

/// The first line of `unlock-prompt` or `dismiss`: the prompt it is waiting on (`unlocked` is
/// set instead when the provider needed no prompt and the line is already the whole answer).
struct PromptLine: Decodable {
    var prompt: String
    var unlocked: [String]?
}

struct PromptAnswer: Decodable {
    struct Completion: Decodable {
        var dismissed: Bool
        /// The unlocked objects when the result was an `ao`.
        var paths: [String]?
        var destination: String?

        enum CodingKeys: String, CodingKey { case dismissed, result, destination }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            dismissed = try container.decode(Bool.self, forKey: .dismissed)
            paths = try? container.decode([String].self, forKey: .result)
            destination = try container.decodeIfPresent(String.self, forKey: .destination)
        }
    }

    var unlocked: [String]
    var prompt: String
    var dismiss: Outcome<Ignored>?
    var completed: [Completion]?
    var timedOut: Bool?
    var caller: String?
    var overheard: Int?
    /// The `Prompt` call's error, and its message.
    var promptError: String?
    var message: String?
}

struct HugeAttributesAnswer: Decodable {
    var count: Int
    var createItem: Outcome<String>
    var searchItems: Outcome<[Int]>
}

struct BigLabelAnswer: Decodable {
    var bytes: Int
    var createItem: Outcome<String>
    var labelLength: Outcome<Int>?
}

struct OpenSessionsAnswer: Decodable {
    var requested: Int
    var opened: Int
    var errors: [String: Int]
    var another: Outcome<String>
}

/// A call that may return a prompt, the prompt prompted and waited for.
struct PromptedCall: Decodable {
    struct Completion: Decodable {
        var dismissed: Bool?
        var timedOut: Bool?
        /// The `Prompt` call's error, and its message.
        var promptError: String?
        var message: String?
    }

    /// The prompt it returned ("/": none), or nil when the call failed.
    var prompt: String?
    var completed: Completion?
    var error: String?

    /// Whether a prompt was returned, and its `Prompt` call refused because nobody could be asked.
    var promptRefusedWithNobodyToAsk: Bool {
        prompt.map { $0 != "/" } == true && completed?.promptError == "org.freedesktop.DBus.Error.AccessDenied"
            && completed?.message?.contains(SecretService.nobodyToAsk) == true
    }
}

struct ChangeLockedAnswer: Decodable {
    struct Item: Decodable {
        var setSecret: Outcome<Ignored>
        var setLabel: Outcome<Ignored>
        var setAttributes: Outcome<Ignored>
        var createItem: PromptedCall
        var delete: PromptedCall
        /// `CreateItem` without `replace`, seven times: the items it made beside the one it matched.
        var createBeside: Outcome<[String]>
    }

    var locked: Int
    var items: [String: Item]
}
