import Foundation
import Testing
import TresorCrypto
import TresorTestSupport

@testable import TresorDesktopPrompt

/// gcr's secret exchange against vectors gcr itself produced
/// (Tests/Fixtures/DesktopPrompt/gcr-secret-exchange-vectors.py, libgcr 3.41 through GObject
/// introspection): each opens with the fixed exponent and gives exactly gcr's password.
@Suite(.blocksItsThread) struct SecretExchangeVectorTests {
    struct Vector: Decodable {
        var privateExponent: String
        var begun: String
        var sent: String
        var password: String
    }

    static let vectors: [Vector] = {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/DesktopPrompt/gcr-secret-exchange-vectors.json")
        struct File: Decodable { var vectors: [Vector] }
        return (try? JSONDecoder().decode(File.self, from: Data(contentsOf: file)).vectors) ?? []
    }()

    @Test func theFixtureIsThere() {
        #expect(Self.vectors.count == 5)
    }

    @Test(arguments: vectors.indices)
    func gcrsSealedPasswordOpens(_ index: Int) throws {
        let vector = Self.vectors[index]
        let pair = try DiffieHellman.KeyPair(privateExponent: Data(hex: vector.privateExponent), group: .modp1536)
        let exchange = try SecretExchange(begun: vector.begun, drawing: { pair })
        #expect(exchange.answer.hasPrefix("[sx-aes-1]\npublic="))
        #expect(try exchange.secret(in: vector.sent) == SecretText(vector.password))
        // The begun message carries no secret.
        #expect(try exchange.secret(in: vector.begun) == nil)
    }

    /// gcr 3 hashes the shared secret without its leading zeros, gcr 4 with them: a pair whose
    /// secret starts with a zero byte is drawn again, so both versions would agree with us.
    @Test func aSharedSecretWithALeadingZeroIsDrawnAgain() throws {
        let vector = Self.vectors[0]
        let peer = try #require(
            vector.begun.split(separator: "\n").first { $0.hasPrefix("public=") }
                .flatMap { Data(base64Encoded: String($0.dropFirst("public=".count))) })
        var zeroLed: DiffieHellman.KeyPair?
        var exponent: UInt32 = 2
        while zeroLed == nil {
            let pair = try DiffieHellman.KeyPair(privateExponent: withUnsafeBytes(of: exponent.bigEndian) { Data($0) }, group: .modp1536)
            if try pair.sharedSecret(peerPublicKey: peer).first == 0 { zeroLed = pair }
            exponent += 1
        }
        let good = try DiffieHellman.KeyPair(privateExponent: Data(hex: vector.privateExponent), group: .modp1536)
        var drawn = [zeroLed!, good]
        let exchange = try SecretExchange(begun: vector.begun, drawing: { drawn.removeFirst() })
        #expect(drawn.isEmpty, "both pairs were drawn")
        #expect(exchange.answer.contains(good.publicKey.base64EncodedString()))
        #expect(try exchange.secret(in: vector.sent) == SecretText(vector.password))
    }

    @Test func anotherKeyDoesNotOpenIt() throws {
        let vector = Self.vectors[0]
        let exchange = try SecretExchange(begun: vector.begun)
        #expect(throws: PrompterError.self) { _ = try exchange.secret(in: vector.sent) }
    }

    @Test func refusesWhatIsNotTheExchange() {
        #expect(throws: PrompterError.self) { _ = try SecretExchange(begun: "[sx-aes-2]\npublic=AAAA\n") }
        #expect(throws: PrompterError.self) { _ = try SecretExchange(begun: "[sx-aes-1]\n") }
        // 1 is not a public key of the group.
        #expect(throws: PrompterError.self) { _ = try SecretExchange(begun: "[sx-aes-1]\npublic=AQ==\n") }
    }

    @Test func theModp1536PrimeIsRFC3526s() {
        let prime = DiffieHellman.Group.modp1536.prime
        #expect(prime.count == 192)
        // RFC 3526 §2: p = 2^1536 - 2^1472 - 1 + 2^64 * (⌊2^1406 π⌋ + 741804): 64 one bits at each end,
        // and the words before the last as the RFC prints them. (gcr's vectors check the rest.)
        #expect(prime.prefix(8) == Data(repeating: 0xFF, count: 8) && prime.suffix(8) == Data(repeating: 0xFF, count: 8))
        #expect(Data(prime[prime.count - 16..<prime.count - 8]).hex == "f1746c08ca237327")
        #expect(DiffieHellman.Group.secondOakley.prime == DiffieHellman.prime)
    }

    @Test func aPasswordNeverPrints() {
        let password = TypedPassword(SecretText("hunter22"))
        #expect(!"\(password)".contains("hunter22"))
        #expect(!String(reflecting: password).contains("hunter22"))
        var dumped = ""
        dump(password, to: &dumped)
        #expect(!dumped.contains("hunter22") && !dumped.contains("104"))
    }
}

extension Data {
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        self.init(bytes)
    }

    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
