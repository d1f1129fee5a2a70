import CTresorSystem
import FoundationEssentials
import Synchronization
import TresorDBus
#if canImport(Glibc)
import Glibc
#endif

/// The clients of the bus, by unique name: each identified once, from the process the bus
/// says is behind it, and pinned with a pidfd so a reused pid can never pass as it.
///
/// Used on the D-Bus thread only. An entry is dropped when its name leaves the bus
/// (`NameOwnerChanged`) or its process is gone.
final class BusClients {
    private struct Known {
        var client: SecretServiceClient
        var pidfd: Int32
    }

    private var known: [String: Known] = [:]
    private let identify: SecretServiceIdentifier
    private let uid = getuid()

    init(identify: @escaping SecretServiceIdentifier) {
        self.identify = identify
    }

    deinit { for entry in known.values { close(entry.pidfd) } }

    /// The client behind `name`. Throws `AccessDenied` for a client of another uid, one whose
    /// process cannot be pinned or read, or whose process is gone.
    func client(_ name: String, on connection: DBusConnection) throws -> SecretServiceClient {
        if let entry = known[name] {
            if tresor_pidfd_has_exited(entry.pidfd) == 0 { return entry.client }
            forget(name)
        }
        let (pid, clientUID) = try credentials(of: name, on: connection)
        guard clientUID == uid else { throw DBusError.accessDenied("this service serves uid \(uid) only") }
        let pidfd = tresor_pidfd_open(pid)
        guard pidfd >= 0 else { throw DBusError.accessDenied("cannot pin the calling process (errno \(errno))") }
        do {
            let client = try identify(pid)
            // The process pinned is the one the bus named, and it still runs: a pid reused
            // between the bus's answer and the pidfd would fail one of these.
            guard try credentials(of: name, on: connection).pid == pid, tresor_pidfd_has_exited(pidfd) == 0 else {
                throw DBusError.accessDenied("the calling process went away while it was identified")
            }
            if client.isProvisional {
                close(pidfd)
            } else {
                known[name] = Known(client: client, pidfd: pidfd)
            }
            return client
        } catch {
            close(pidfd)
            throw error
        }
    }

    /// The clients known now, by unique name (signals about items go only to those that see them).
    var all: [(name: String, client: SecretServiceClient)] { known.map { ($0.key, $0.value.client) } }

    func forget(_ name: String) {
        if let entry = known.removeValue(forKey: name) { close(entry.pidfd) }
    }

    /// The process and user behind `name`, as the bus saw them when it connected — one round
    /// trip (`GetConnectionCredentials`, D-Bus 1.7+) for what took two.
    private func credentials(of name: String, on connection: DBusConnection) throws -> (pid: Int32, uid: UInt32) {
        guard case .array(_, let entries)? = try connection.callBus("GetConnectionCredentials", [.string(name)]).first else {
            throw DBusError.accessDenied("the bus does not say which process is calling")
        }
        var pid: UInt32?, uid: UInt32?
        for case .dictEntry(.string(let key), let value) in entries {
            guard case .uint32(let number) = value.unwrapped else { continue }
            switch key {
            case "ProcessID": pid = number
            case "UnixUserID": uid = number
            default: break
            }
        }
        guard let pid, pid > 0, let uid else { throw DBusError.accessDenied("the bus does not say which process and user are calling") }
        return (Int32(bitPattern: pid), uid)
    }
}
