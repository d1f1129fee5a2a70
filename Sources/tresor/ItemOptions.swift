import ArgumentParser
import FoundationEssentials
import TresorKit

extension ItemClass: ExpressibleByArgument {}
extension ProtectionClass: ExpressibleByArgument {}
extension ItemAttributes.KeyClass: ExpressibleByArgument {}

/// The attribute options shared by `tresor item` commands: in `add` they describe the new item,
/// elsewhere they are what must match.
struct ItemOptions: ParsableArguments {
    @Option(name: .customLong("class"), help: "Item class: genp (generic password), inet (internet password), cert or keys.")
    var itemClass: ItemClass = .genericPassword

    @Option(help: "Match one item by its id.") var id: String?
    @Option(help: "Keychain: login (default) or \"System Roots\" (read-only).") var keychain: String?

    @Option(help: "Service (generic passwords).") var service: String?
    @Option(help: "Account.") var account: String?
    @Option(help: "Label: the name people see.") var label: String?
    @Option(help: "Description (kSecAttrDescription).") var description: String?
    @Option(help: "Comment.") var comment: String?
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
    @Option(help: "Protection class, e.g. whenUnlocked, afterFirstUnlock, whenPasscodeSetThisDeviceOnly.")
    var accessible: ProtectionClass?
    @Option(help: "Access group.") var group: String?
    @Option(name: .customLong("attribute"), help: "A free-form attribute key=value (repeatable).")
    var custom: [String] = []

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
            if !custom.isEmpty {
                var map: [String: String] = [:]
                for pair in custom {
                    guard let equals = pair.firstIndex(of: "=") else {
                        throw ValidationError("--attribute takes key=value, got \(pair)")
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

/// Reads a secret from standard input: exactly the bytes given, less one trailing newline.
func readSecretFromStandardInput() throws -> Data {
    var data = StandardStream.input.readToEnd()
    if data.last == 0x0A { data.removeLast() }
    if data.last == 0x0D { data.removeLast() }
    guard !data.isEmpty else { throw ValidationError("standard input held no secret") }
    return data
}

/// Runs `body`; if the daemon answers that this request needs the passcode (user presence,
/// or another application's item), asks for it and tries once more.
func withPasscodeIfAsked<T>(stdin: Bool, descriptor: Int32? = nil, _ body: (String?) throws -> T) throws -> T {
    do {
        return try body(nil)
    } catch let error as APIError where error.code == .passcodeRequired {
        // Nowhere to ask (a script without --passcode-stdin): the daemon's answer says what to do.
        guard stdin || descriptor != nil || SecretInput.terminalAvailable else { throw error }
        var input = descriptor.map { SecretInput(fileDescriptor: $0) } ?? SecretInput(fromStandardInput: stdin)
        return try body(try input.next("Passcode:"))
    }
}
