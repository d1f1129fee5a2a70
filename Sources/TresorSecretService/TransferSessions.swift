import FoundationEssentials
import Synchronization
import TresorDBus

/// How secrets travel between this service and one client (`OpenSession`): in the clear over
/// the bus (`plain`), or AES-128-CBC under a key agreed by Diffie-Hellman
/// (`dh-ietf1024-sha256-aes128-cbc-pkcs7`, ``SessionEncryption``).
///
/// A session belongs to the bus connection that opened it: another connection naming its path
/// is refused, and the session closes when its connection leaves the bus.
final class TransferSessions: Sendable {
    struct Session: Sendable {
        var owner: String
        var encryption: SessionEncryption?
    }

    /// The most sessions one connection may hold open (a client that floods `OpenSession` is
    /// refused, not served until memory runs out).
    static let perConnection = 64

    private let sessions = Mutex<[String: Session]>([:])
    private let counter = Atomic<UInt64>(0)

    /// Opens a session for `owner`. Returns the output to send back and the session's path.
    func open(algorithm: String, input: DBusValue, owner: String) throws -> (output: DBusValue, path: String) {
        let encryption: SessionEncryption?
        let output: DBusValue
        switch algorithm {
        case "plain":
            encryption = nil
            output = .string("")
        case SessionEncryption.algorithm:
            guard let peerKey = input.unwrapped.byteArray else {
                throw DBusError.invalidArguments("\(SessionEncryption.algorithm) needs the client's public key as a byte array")
            }
            let agreed = try SessionEncryption(peerPublicKey: peerKey)
            encryption = agreed
            output = .bytes(agreed.publicKey)
        default:
            throw DBusError("org.freedesktop.DBus.Error.NotSupported", "unsupported algorithm (plain and \(SessionEncryption.algorithm) are)")
        }
        let id = String(counter.add(1, ordering: .relaxed).newValue)
        let path = SecretObjectPath.session(id).path
        try sessions.withLock { sessions in
            guard sessions.values.count(where: { $0.owner == owner }) < Self.perConnection else {
                throw DBusError.limitsExceeded("at most \(Self.perConnection) open sessions per connection")
            }
            sessions[path] = Session(owner: owner, encryption: encryption)
        }
        return (.variant(output), path)
    }

    /// The session at `path` if `caller` opened it.
    func session(_ path: String, for caller: String) throws -> Session {
        guard let session = sessions.withLock({ $0[path] }), session.owner == caller else {
            throw DBusError("org.freedesktop.Secret.Error.NoSession", "no such session for this connection")
        }
        return session
    }

    func close(_ path: String, for caller: String) throws {
        _ = try session(path, for: caller)
        sessions.withLock { _ = $0.removeValue(forKey: path) }
    }

    /// Closes every session of a connection that left the bus.
    func closeAll(of owner: String) {
        sessions.withLock { sessions in sessions = sessions.filter { $0.value.owner != owner } }
    }

    /// A secret as it travels: the Secret Service's `(oayays)` struct.
    func encode(_ secret: SecretValue, sessionPath: String, for caller: String) throws -> DBusValue {
        let session = try session(sessionPath, for: caller)
        var parameters: [UInt8] = []
        var value = secret.bytes
        if let encryption = session.encryption {
            (parameters, value) = try encryption.seal(secret.bytes)
        }
        return .structure([.objectPath(sessionPath), .bytes(parameters), .bytes(value), .string(secret.contentType)])
    }

    /// A secret a client sent, opened with the session it names (which must be the caller's).
    func decode(_ value: DBusValue, for caller: String) throws -> SecretValue {
        guard case .structure(let fields) = value, fields.count == 4,
            case .objectPath(let path) = fields[0], let parameters = fields[1].byteArray, let bytes = fields[2].byteArray,
            let contentType = fields[3].stringValue
        else { throw DBusError.invalidArguments("a secret is a (oayays) struct") }
        guard contentType.utf8.count <= SecretLimits.contentTypeBytes else {
            throw DBusError.invalidArguments("a content type is at most \(SecretLimits.contentTypeBytes) bytes")
        }
        let session = try session(path, for: caller)
        guard let encryption = session.encryption else {
            return SecretValue(bytes: bytes, contentType: contentType.isEmpty ? "text/plain" : contentType)
        }
        return SecretValue(bytes: try encryption.open(bytes, parameters: parameters), contentType: contentType.isEmpty ? "text/plain" : contentType)
    }
}
