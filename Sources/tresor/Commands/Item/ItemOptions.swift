import ArgumentParser
import FoundationEssentials
import TresorKit
import TresorModel
import TresorProtocol

extension ItemClass: ExpressibleByArgument {}
extension ItemAttributes.KeyClass: ExpressibleByArgument {}

/// The attribute options shared by `tresor item` commands: in `add` they describe the new item,
/// elsewhere they are what must match.
struct ItemOptions: ParsableArguments {
    @Option(name: .customLong("class"), help: "Item class: genp (generic password), inet (internet password), cert or keys.")
    var itemClass: ItemClass = .genericPassword

    @Option(help: "Match one item by its id.") var id: String?
    @Option(help: "Keychain: login (default), one you created, or \"System Roots\" (read-only).", completion: Completion.keychains) var keychain:
        String?

    @Option(help: "Service (generic passwords).", completion: Completion.services) var service: String?
    @Option(help: "Account.") var account: String?
    @Option(help: "Label: the name people see; - to type it or read it from standard input, off the command line.")
    var label: String?
    @Option(help: "Description (kSecAttrDescription); - to type it or read it from standard input.") var description: String?
    @Option(help: "Comment; - to type it or read it from standard input.") var comment: String?
    @Option(help: "Server (internet passwords).") var server: String?
    @Option(name: .customLong("protocol"), help: "Protocol, e.g. https (internet passwords).") var itemProtocol: String?
    @Option(help: "Port (internet passwords).") var port: Int?
    @Option(help: "Path (internet passwords).") var path: String?
    @Option(help: "Authentication type (internet passwords).") var authenticationType: String?
    @Option(help: "Security domain (internet passwords).") var securityDomain: String?
    @Option(help: "Key class: public, private or symmetric (keys).") var keyClass: ItemAttributes.KeyClass?
    @Option(help: "Application tag, as text (keys).") var applicationTag: String?
    @Option(help: "Key type, e.g. ec, rsa, aes (keys).") var keyType: String?
    @Option(help: "Key size in bits (keys).") var keySize: Int?
    @Option(help: "Protection class, e.g. whenUnlocked, afterFirstUnlock (or after-first-unlock), whenPasscodeSetThisDeviceOnly.")
    var accessible: ProtectionClass?
    @Option(help: "Access group.") var group: String?
    @Flag(
        help:
            "Synchronizable (kSecAttrSynchronizable): the item syncs to your other devices (login keychain only, never with a ThisDeviceOnly class); a search without it finds only items that do not."
    )
    var synchronizable = false
    @Option(name: .customLong("attribute"), help: "A free-form attribute key=value (repeatable).")
    var custom: [String] = []

    /// Refuses, before any secret is asked for, what the keychain would refuse to store: a
    /// synchronizable item of a class that never leaves this device, or of a keychain that
    /// does not sync.
    func checkStorable() throws {
        if synchronizable, accessible?.isThisDeviceOnly == true {
            throw ValidationError("--synchronizable and a ThisDeviceOnly class exclude each other: such an item never leaves this device")
        }
        if synchronizable, let keychain, keychain != KeychainName.login {
            throw ValidationError("--synchronizable: only the login keychain syncs, so an item of \(keychain) cannot be synchronizable")
        }
    }

    /// Replaces the options given as `-` (label, description, comment, in that order) with
    /// what the user types or standard input's next lines (``AskedText``). Every command
    /// that takes these options calls it first.
    /// - Throws: `ValidationError` when standard input has no line for one of them.
    mutating func readAskedValues() throws {
        label = try AskedText.resolve(label, prompt: "Label:")
        description = try AskedText.resolve(description, prompt: "Description:")
        comment = try AskedText.resolve(comment, prompt: "Comment:")
    }

    var attributes: ItemAttributes {
        get throws {
            var attributes = ItemAttributes()
            attributes.service = service
            attributes.account = account
            attributes.label = label
            attributes.description = description
            attributes.comment = comment
            attributes.server = server
            attributes.protocol = itemProtocol
            attributes.port = port
            attributes.path = path
            attributes.authenticationType = authenticationType
            attributes.securityDomain = securityDomain
            attributes.keyClass = keyClass
            attributes.applicationTag = applicationTag.map { Data($0.utf8) }
            attributes.keyType = keyType
            attributes.keySizeInBits = keySize
            attributes.accessible = accessible
            attributes.accessGroup = group
            if synchronizable { attributes.synchronizable = true }
            if !custom.isEmpty {
                var map: [String: String] = [:]
                for pair in custom {
                    guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                        throw ValidationError("--attribute takes key=value with a key, got \(pair)")
                    }
                    map[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
                }
                attributes.custom = map
            }
            return attributes
        }
    }

    func query(limit: ItemQuery.Limit, returnData: Bool) throws -> ItemQuery {
        ItemQuery(itemClass, attributes: try attributes, id: id, limit: limit, returnData: returnData)
    }
}

/// Reads a secret from standard input: exactly the bytes left after any lines taken before
/// it (``StandardInput``) — for a password less one line ending (`\n` or `\r\n`), which `echo`
/// and here-strings add; certificate and key data are binary and stay byte for byte.
/// - Parameter itemClass: the class of the item the secret is for.
/// - Returns: the secret.
/// - Throws: `ValidationError` when nothing is left.
func readSecretFromStandardInput(for itemClass: ItemClass) throws -> Data {
    var data = try StandardInput.shared.rest()
    if [.genericPassword, .internetPassword].contains(itemClass), data.last == 0x0A {
        data.removeLast()
        if data.last == 0x0D { data.removeLast() }
    }
    // An empty secret is one the API stores, but on standard input it is a pipe that gave nothing.
    guard !data.isEmpty else { throw ValidationError("standard input held no secret (an empty one is refused here: give at least one byte)") }
    // Said before the request, which the daemon would refuse by its size alone past 1 MiB.
    guard data.count <= ItemLimits.secretBytes else {
        throw ValidationError("the secret is \(data.count) bytes; an item holds at most \(ByteSize(ItemLimits.secretBytes))")
    }
    if itemClass == .certificate, let der = try derOfPEMCertificate(data) { return der }
    return data
}

/// The DER bytes of a certificate given in PEM (`-----BEGIN CERTIFICATE-----`, base64, `-----END
/// CERTIFICATE-----`, as `openssl` writes it): the keychain keeps certificates as DER, as Apple's
/// does. Nil when `data` is not PEM (DER is taken as it is).
/// - Throws: `ValidationError` for PEM holding no certificate, or more than one.
func derOfPEMCertificate(_ data: Data) throws -> Data? {
    let begin = "-----BEGIN CERTIFICATE-----", end = "-----END CERTIFICATE-----"
    guard let text = String(data: data, encoding: .utf8), text.contains(begin) else { return nil }
    let blocks = text.components(separatedBy: begin).dropFirst()
    guard blocks.count == 1, let block = blocks.first, let body = block.components(separatedBy: end).first, block.contains(end) else {
        throw ValidationError("give one PEM certificate at a time (\(blocks.count) BEGIN CERTIFICATE blocks)")
    }
    guard let der = Data(base64Encoded: body.filter { !$0.isWhitespace }), !der.isEmpty else {
        throw ValidationError("the PEM certificate's base64 does not decode")
    }
    return der
}

/// A new item's secret: typed twice on the terminal with echo off — without `--secret-stdin`,
/// or with it when standard input is the terminal itself — else the rest of standard input.
/// - Parameters:
///   - secretStdin: whether `--secret-stdin` was given.
///   - itemClass: the class of the item the secret is for.
/// - Returns: the secret.
/// - Throws: `ValidationError` when there is neither a terminal nor `--secret-stdin`, when
///   the two typed secrets differ, or when the secret is empty.
func newSecret(secretStdin: Bool, for itemClass: ItemClass) throws -> Data {
    if secretStdin && !StandardInput.shared.isTerminal { return try readSecretFromStandardInput(for: itemClass) }
    var input = SecretInput(fromStandardInput: false, flag: "--secret-stdin")
    let secret = try input.new("Secret:")
    guard !secret.isEmpty else { throw ValidationError("the secret is empty") }
    return Data(secret.utf8)
}

/// The passcode of a command whose standard input carries both it and a secret
/// (`--passcode-stdin --secret-stdin`): its line comes first, so it is read before the secret,
/// whether or not the request turns out to need it.
/// - Returns: the passcode when both flags were given, else nil (asked later, if needed).
/// - Throws: `ValidationError` when standard input has no line for it.
func passcodeBeforeSecret(passcodeStdin: Bool, secretStdin: Bool) throws -> String? {
    guard passcodeStdin && secretStdin && !StandardInput.shared.isTerminal else { return nil }
    var input = SecretInput(fromStandardInput: true)
    return try input.next("Passcode:")
}

/// Runs `body`; if the daemon answers that this request needs the passcode (user presence,
/// or another application's item), asks for it and tries once more.
/// - Parameters:
///   - stdin: `--passcode-stdin` was given (and standard input does not carry a secret).
///   - descriptor: `--passcode-fd`, where the passcode is read from instead.
///   - given: a passcode read ahead (``passcodeBeforeSecret(passcodeStdin:secretStdin:)``): sent
///     with the first try.
///   - body: the request, given the passcode when there is one.
/// - Returns: what `body` returns.
/// - Throws: what `body` throws; `passcodeRequired` when there is nowhere to ask.
func withPasscodeIfAsked<T>(stdin: Bool, descriptor: Int32? = nil, given: String? = nil, _ body: (String?) throws -> T) throws -> T {
    if let given { return try body(given) }
    do {
        return try body(nil)
    } catch let error as APIError where error.code == .passcodeRequired {
        // Nowhere to ask (a script without --passcode-stdin): the daemon's answer says what to do.
        guard stdin || descriptor != nil || Terminal.available else { throw error }
        var input = descriptor.map { SecretInput(fileDescriptor: $0) } ?? SecretInput(fromStandardInput: stdin)
        return try body(try input.next("Passcode:"))
    }
}

extension TresorClient {
    /// The passcode typed again, when the keybag has one: what registering or removing an
    /// application, trusting a client or approving a device needs.
    /// - Parameters:
    ///   - stdin: `--passcode-stdin` was given: read it there, not on the terminal.
    ///   - prompt: the question, naming what it is for.
    /// - Returns: the passcode, or nil for a keybag without one.
    /// - Throws: the daemon's errors; `SecretInput`'s when there is nothing to read.
    func passcodeAgainIfSet(stdin: Bool, prompt: String) throws -> String? {
        guard try status().passcodeSet else { return nil }
        var input = SecretInput(fromStandardInput: stdin)
        return try input.next(prompt)
    }
}
