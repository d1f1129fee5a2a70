import Testing

@testable import TresorCrypto

/// A secret taken out of the string a request was decoded into leaves no copy in that string's
/// storage (docs/SECURITY.md §4.11).
@Suite struct TypedSecretTests {
    struct Typed: TypedSecret {
        let text: SecretText
        init(_ text: String) throws {
            guard !text.isEmpty else { throw Refusal() }
            self.text = SecretText(text)
        }
    }

    struct Refusal: Error {}

    /// A string as a decoder makes it: built at run time, longer than a string kept inline.
    static func decoded(_ text: String) -> String { String(decoding: Array(text.utf8), as: UTF8.self) }

    @Test func takingKeepsTheTextAndZeroesTheStringsStorage() throws {
        var field = Self.decoded("e2e-typed-secret-longer-than-inline")
        // A second reference to the same storage, only to look at it afterwards: `taking` writes
        // where the bytes are, so this copy reads what the freed storage would hold.
        let storage = field
        let secret = try Typed.taking(&field)
        #expect(secret.text.withUnsafeBytes { Array($0) } == Array("e2e-typed-secret-longer-than-inline".utf8))
        #expect(field.isEmpty)
        #expect(storage.utf8.count == 35 && storage.utf8.allSatisfy { $0 == 0 }, "the decoded string's bytes are still there")
    }

    @Test func anOptionalFieldIsTakenOrLeftAbsent() throws {
        var absent: String? = nil
        #expect(try Typed.taking(&absent) == nil)
        var present: String? = Self.decoded("e2e-optional-typed-secret-field")
        let storage = present!
        #expect(try Typed.taking(&present) != nil)
        #expect(present == nil)
        #expect(storage.utf8.allSatisfy { $0 == 0 })
    }

    @Test func aRefusedSecretIsZeroedAllTheSame() throws {
        var empty = ""
        #expect(throws: Refusal.self) { try Typed.taking(&empty) }
        var field = Self.decoded("e2e-refused-because-the-init-throws")
        let storage = field
        struct AlwaysRefused: TypedSecret {
            init(_ text: String) throws { throw Refusal() }
        }
        #expect(throws: Refusal.self) { try AlwaysRefused.taking(&field) }
        #expect(field.isEmpty && storage.utf8.allSatisfy { $0 == 0 })
    }
}
