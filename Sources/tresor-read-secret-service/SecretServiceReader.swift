import FoundationEssentials
import TresorDBus
import TresorModel
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// Reads every item of the provider that owns `org.freedesktop.secrets` on the session bus,
/// through the Secret Service API as any client would (Secret Service API Draft 0.2).
struct SecretServiceReader {
    static let busName = "org.freedesktop.secrets"
    static let servicePath = "/org/freedesktop/secrets"
    static let serviceInterface = "org.freedesktop.Secret.Service"
    static let collectionInterface = "org.freedesktop.Secret.Collection"
    static let itemInterface = "org.freedesktop.Secret.Item"
    static let lockedCollection = "locked: unlock it in its own tool first"

    /// Why nothing can be read; its words are this program's message.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let connection: DBusConnection

    /// Connects to the session bus of `environment`.
    /// - Throws: ``Failure`` without a session bus; ``DBusError`` when it cannot be reached.
    init(environment: [String: String]) throws {
        guard let address = DBusConnection.sessionBusAddress(environment) else {
            throw Failure(description: "nothing to import from: DBUS_SESSION_BUS_ADDRESS is not set (no session bus)")
        }
        connection = try DBusConnection(address: address)
    }

    /// Every item of every collection the provider lets this process read without a prompt,
    /// and the collections and items it could not read, each with the reason.
    /// - Returns: the export, secrets included.
    /// - Throws: ``Failure`` when nobody, or tresord itself, owns the name; ``DBusError`` when
    ///   the provider fails a call that concerns everything (a session, the collections).
    func read() throws -> SecretServiceExport {
        let provider = try providerName()
        // A plain session: the secrets travel unencrypted over the bus. This is the user's own
        // session bus, between two of the user's processes, so what could read them there could
        // read them from either process; the Diffie-Hellman session protects against nothing
        // more here (and every provider must offer plain).
        let opened = try call(Self.servicePath, Self.serviceInterface, "OpenSession", [.string("plain"), .variant(.string(""))])
        guard opened.count == 2, let session = opened[1].stringValue else {
            throw Failure(description: "\(provider) answered OpenSession with \(opened.map(\.signature).joined())")
        }
        defer { _ = try? call(session, "org.freedesktop.Secret.Session", "Close") }

        var export = SecretServiceExport(provider: provider, items: [], skipped: [])
        var unlockedHere: [String] = []
        for collection in try property(Self.servicePath, Self.serviceInterface, "Collections")?.objectPathList ?? [] {
            // The `session` collection lives in the provider's memory until it stops: a copy on
            // disk would outlive it.
            if collection.hasSuffix("/collection/session") {
                export.skipped.append(
                    SecretServiceSkip(
                        what: "collection “session”", why: "its items live in the provider's memory only, until it stops: not copied to disk"))
                continue
            }
            let label = (try? property(collection, Self.collectionInterface, "Label"))??.stringValue ?? collection
            do {
                try read(collection, label: label, session: session, into: &export, unlocked: &unlockedHere)
            } catch let error as DBusError {
                export.skipped.append(SecretServiceSkip(what: "collection “\(label)”", why: error.description))
            }
        }
        // Leave the provider as it was: what had to be unlocked is locked again.
        if !unlockedHere.isEmpty { _ = try? call(Self.servicePath, Self.serviceInterface, "Lock", [.objectPaths(unlockedHere)]) }
        return export
    }

    /// Adds the items of `collection` to `export`, or says why it cannot be read; a collection
    /// it had to unlock is added to `unlocked`.
    private func read(
        _ collection: String, label: String, session: String, into export: inout SecretServiceExport, unlocked: inout [String]
    ) throws {
        let what = "collection “\(label)”"
        if try property(collection, Self.collectionInterface, "Locked")?.boolValue == true {
            guard try unlockWithoutPrompt(collection) else {
                export.skipped.append(SecretServiceSkip(what: what, why: Self.lockedCollection))
                return
            }
            unlocked.append(collection)
        }
        for item in try property(collection, Self.collectionInterface, "Items")?.objectPathList ?? [] {
            do {
                export.items.append(try read(item, collection: label, session: session))
            } catch let error as DBusError {
                export.skipped.append(SecretServiceSkip(what: "an item of \(what) (\(item))", why: error.description))
            }
        }
    }

    /// The owner's executable name.
    /// - Throws: ``Failure`` when nobody owns the name, or tresord does.
    private func providerName() throws -> String {
        guard try connection.callBus("NameHasOwner", [.string(Self.busName)]).first?.boolValue == true else {
            throw Failure(
                description: "nothing to import from: no program owns \(Self.busName) on the session bus (start gnome-keyring or KeePassXC first)")
        }
        guard case .uint32(let pid)? = try connection.callBus("GetConnectionUnixProcessID", [.string(Self.busName)]).first else {
            throw Failure(description: "the bus did not say which process owns \(Self.busName)")
        }
        let executable = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.trimmingWhitespace() ?? ""
        let path = Self.executablePath(pid: pid)
        let name = path.map { String($0.split(separator: "/").last ?? "") } ?? executable
        if name == "tresord" {
            throw Failure(description: "nothing to import from: tresord answers the Secret Service already")
        }
        return name.isEmpty ? "pid \(pid)" : name
    }

    /// `/proc/<pid>/exe`, or nil when it cannot be read.
    private static func executablePath(pid: UInt32) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Unlocks `collection` if the provider does so without asking the user.
    /// - Returns: whether it is unlocked now; a prompt the provider wanted is dismissed.
    private func unlockWithoutPrompt(_ collection: String) throws -> Bool {
        let answer = try call(Self.servicePath, Self.serviceInterface, "Unlock", [.objectPaths([collection])])
        guard answer.count == 2 else { return false }
        if let prompt = answer[1].stringValue, prompt != "/" {
            _ = try? call(prompt, "org.freedesktop.Secret.Prompt", "Dismiss")
        }
        return answer[0].objectPathList?.contains(collection) == true
    }

    private func read(_ item: String, collection: String, session: String) throws -> SecretServiceExport.Item {
        let properties = try call(item, "org.freedesktop.DBus.Properties", "GetAll", [.string(Self.itemInterface)]).first?.propertyDictionary ?? [:]
        let secret = try call(item, Self.itemInterface, "GetSecret", [.objectPath(session)])
        // (o session, ay parameters, ay value, s content_type); plain: the value as it is.
        guard case .structure(let fields)? = secret.first, fields.count == 4, let value = fields[2].byteArray else {
            throw DBusError.failed("GetSecret answered \(secret.map(\.signature).joined()), not (oayays)")
        }
        return SecretServiceExport.Item(
            collection: collection, label: properties["Label"]?.stringValue ?? "",
            attributes: properties["Attributes"]?.stringDictionary ?? [:], secret: Data(value),
            contentType: fields[3].stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "text/plain",
            created: Self.date(properties["Created"]), modified: Self.date(properties["Modified"]))
    }

    /// A `t` of seconds since 1970 (0: unknown).
    private static func date(_ value: DBusValue?) -> Date? {
        guard case .uint64(let seconds)? = value, seconds > 0, seconds < 1 << 40 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private func property(_ path: String, _ interface: String, _ name: String) throws -> DBusValue? {
        try call(path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)]).first?.unwrapped
    }

    private func call(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) throws -> [DBusValue] {
        try connection.call(
            .methodCall(destination: Self.busName, path: path, interface: interface, member: member, arguments: arguments),
            timeoutMilliseconds: 25_000
        ).arguments
    }
}
