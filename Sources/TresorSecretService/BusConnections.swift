import FoundationEssentials
import TresorDBus
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// What the provider can check of the process the bus names for a connection.
///
/// D-Bus carries no credentials per message: the bus answers, for a unique name, the pid that
/// connected. A process that connects, forks, and executes another program leaves that program's
/// pid behind a connection its child speaks on — and the program it executed is who the bus
/// says is calling. Nothing on D-Bus proves who sends a message; these checks find what can be
/// found of such a borrow (docs/SECURITY.md, "Borrowed bus connections"):
/// - the pid executed another program after it connected (its image when the bus announced the
///   connection, against its image now);
/// - the socket checks of `ConnectionHolding`: the pid holds fewer sockets connected to the bus
///   than the bus names connections for it, or another program holds them (looked for only when
///   the pid runs a program with an identity of its own: see ``doubt(about:pid:lookingForOtherHolders:)``).
///
/// Used on the D-Bus thread only.
final class BusConnections {
    /// A connection as the provider saw it appear: its pid and what that pid ran then.
    private struct Seen {
        var pid: Int32
        /// The connection's uid as the bus answered it (nil when the pid alone was recorded).
        var uid: UInt32?
        var image: ProcessImage?
    }

    private var seen: [String: Seen] = [:]
    /// The bus's listening address: what the bus's end of every client connection is bound to.
    private let busAddress: [UInt8]?
    private let uid = getuid()
    private let procRoot: String

    /// - Parameters:
    ///   - busAddress: the bus's listening address; nil when unknown (no socket checks then).
    ///   - procRoot: where procfs is mounted.
    init(busAddress: [UInt8]?, procRoot: String = "/proc") {
        self.busAddress = busAddress
        self.procRoot = procRoot
    }

    /// - Parameter connection: the provider's own connection, whose peer is the bus's listening address.
    convenience init(connection: DBusConnection) {
        self.init(busAddress: connection.socketDescriptor.flatMap(UnixSockets.peerAddress(ofConnected:)))
    }

    /// Records every connection on the bus now (`ListNames`), as if each had just appeared.
    func load(from connection: DBusConnection) {
        guard case .array(_, let names)? = try? connection.callBus("ListNames", []).first else { return }
        for case .string(let name) in names where name.hasPrefix(":") && name != connection.uniqueName {
            appeared(name, on: connection)
        }
    }

    /// A new connection: its pid and that pid's image, read as soon as the bus announced it.
    func appeared(_ name: String, on connection: DBusConnection) {
        guard let credentials = try? BusCredentials.of(name, on: connection) else { return }
        appeared(name, pid: credentials.pid, uid: credentials.uid)
    }

    /// A new connection opened by `pid` (as user `uid`, when the bus said).
    func appeared(_ name: String, pid: Int32, uid: UInt32? = nil) {
        seen[name] = Seen(pid: pid, uid: uid, image: ProcessImage.of(pid: pid, procRoot: procRoot))
    }

    /// The pid and uid the bus gave for connection `name` when it appeared, or nil when they were
    /// not both recorded. The bus fixes a connection's credentials when it connects, and never
    /// gives its unique name to another: asking again would answer the same.
    func credentials(of name: String) -> (pid: Int32, uid: UInt32)? {
        guard let entry = seen[name], let uid = entry.uid else { return nil }
        return (entry.pid, uid)
    }

    func left(_ name: String) { seen[name] = nil }

    /// Why the connection `name`, which the bus says `pid` opened, may be spoken on by another
    /// process; nil when no check finds anything.
    ///
    /// Whether another process holds the connection's socket is worth its cost (every descriptor
    /// of the user's processes) only for a program with an identity of its own. A generic client
    /// (secret-tool, git's helper, an interpreter) is served no more on a borrowed connection than
    /// the borrower gets by executing that client itself, with arguments of its choosing, where
    /// it stands (docs/SECURITY.md, "Borrowed bus connections").
    /// - Parameters:
    ///   - name: the connection's unique name.
    ///   - pid: the process the bus names for it.
    ///   - lookingForOtherHolders: whether to look for another process holding its socket.
    /// - Returns: the reason to doubt, or nil.
    func doubt(about name: String, pid: Int32, lookingForOtherHolders: Bool = true) -> String? {
        let now = ProcessImage.of(pid: pid, procRoot: procRoot)
        if let then = seen[name]?.image, then != now {
            return "process \(pid) started another program after it connected to the bus"
        }
        guard let busAddress else { return nil }
        let named = seen.values.filter { $0.pid == pid }.count
        return ConnectionHolding.doubt(
            pid: pid, connections: named, to: busAddress, uid: uid, lookingForOtherHolders: lookingForOtherHolders, procRoot: procRoot)
    }
}

/// The process and user behind a unique name, as the bus saw them when it connected — one round
/// trip (`GetConnectionCredentials`, D-Bus 1.7+).
enum BusCredentials {
    static func of(_ name: String, on connection: DBusConnection) throws -> (pid: Int32, uid: UInt32) {
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
