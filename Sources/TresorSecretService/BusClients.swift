import CTresorSystem
import FoundationEssentials
import Logging
import Synchronization
import TresorDBus
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// The clients of the bus, by unique name: each identified once, from the process the bus
/// says is behind it, pinned with a pidfd so a reused pid can never pass as it, and checked on
/// every call to still run the executable it was identified by.
///
/// A connection that another process may be speaking on (``BusConnections``) is not identified:
/// its calls are refused. Used on the D-Bus thread only. An entry is dropped when its name leaves
/// the bus (`NameOwnerChanged`) or its process is gone.
final class BusClients {
    private struct Known {
        var client: SecretServiceClient
        var pid: Int32
        var pidfd: Int32
        /// The executable the process ran when it was identified.
        var executable: FileIdentity?
    }

    private var known: [String: Known] = [:]
    private let identify: SecretServiceIdentifier
    private let uid = getuid()
    /// Every connection of the bus, as the provider saw it appear.
    let connections: BusConnections
    private let logger: Logger

    init(identify: @escaping SecretServiceIdentifier, connections: BusConnections, logger: Logger) {
        self.identify = identify
        self.connections = connections
        self.logger = logger
    }

    deinit { for entry in known.values { close(entry.pidfd) } }

    /// The client behind `name`. Throws `AccessDenied` for a client of another uid, one whose
    /// process cannot be pinned or read, whose process is gone, or whose connection another
    /// process may be speaking on.
    func client(_ name: String, on connection: DBusConnection) throws -> SecretServiceClient {
        if let entry = known[name] {
            if tresor_pidfd_has_exited(entry.pidfd) == 0 && ProcessImage.executable(of: entry.pid) == entry.executable { return entry.client }
            forget(name)
        }
        // Read as the bus announced the connection, when it did: one round trip fewer.
        let (pid, clientUID) = try connections.credentials(of: name) ?? BusCredentials.of(name, on: connection)
        guard clientUID == uid else { throw DBusError.accessDenied("this service serves uid \(uid) only") }
        let pidfd = tresor_pidfd_open(pid)
        guard pidfd >= 0 else { throw DBusError.accessDenied("cannot pin the calling process (errno \(errno))") }
        do {
            let executable = ProcessImage.executable(of: pid)
            var client = try identify(pid)
            if let doubt = connections.doubt(about: name, pid: pid, lookingForOtherHolders: !client.isGenericClient) {
                logger.notice("a Secret Service caller was not identified", metadata: ["name": "\(name)", "pid": "\(pid)", "why": "\(doubt)"])
                throw DBusError.accessDenied("Tresor cannot tell which program is calling: \(doubt)")
            }
            client.pid = pid
            // The process pinned is the one the bus named, and it still runs the program it was
            // identified by: a pid reused, or an exec, between the bus's answer and now would fail one of these.
            guard try BusCredentials.of(name, on: connection).pid == pid, tresor_pidfd_has_exited(pidfd) == 0,
                executable != nil, ProcessImage.executable(of: pid) == executable
            else {
                throw DBusError.accessDenied("the calling process went away or changed while it was identified")
            }
            if client.isProvisional {
                close(pidfd)
            } else {
                known[name] = Known(client: client, pid: pid, pidfd: pidfd, executable: executable)
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
}
