import Foundation
import TresorDBus
import TresorSystem

/// The connection that owns the prompter's bus name, checked to run a trusted prompter.
struct PrompterOwner {
    /// Its unique name (`:1.7`): where every question goes.
    let uniqueName: String
    let process: PrompterProcess

    /// Finds and checks the prompter, starting it through the bus when `start` and it is activatable.
    /// - Throws: ``PrompterError/noPrompter`` or ``PrompterError/untrustedPrompter(_:)``.
    init(on connection: DBusConnection, trusted: [String], start: Bool, deadline: ContinuousClock.Instant) throws {
        var owner = Self.owner(on: connection)
        // Asked to start it, the bus says at once when no service has the name. Another failure
        // of the start (a busy machine: the bus could not start or hear from it in time) is tried
        // once more while the deadline allows.
        var attempts = 0
        while owner == nil, start, attempts < 2, deadline - .now > .seconds(1) {
            attempts += 1
            let waitMilliseconds = Int32(clamping: max(1_000, min(25_000, (deadline - .now).milliseconds)))
            do {
                _ = try connection.call(
                    .methodCall(
                        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                        member: "StartServiceByName", arguments: [.string(SystemPrompter.busName), .uint32(0)]),
                    timeoutMilliseconds: waitMilliseconds)
            } catch let error as DBusError where error.name == "org.freedesktop.DBus.Error.ServiceUnknown" {
                break
            } catch {}
            owner = Self.owner(on: connection)
        }
        guard let owner else { throw PrompterError.noPrompter }
        guard case .uint32(let pid)? = try? connection.callBus("GetConnectionUnixProcessID", [.string(owner)]).first,
            case .uint32(let uid)? = try? connection.callBus("GetConnectionUnixUser", [.string(owner)]).first
        else { throw PrompterError.untrustedPrompter("the bus does not say which process owns it") }
        process = try PrompterProcess(pid: Int32(bitPattern: pid), uid: uid, trusted: trusted)
        try Self.checkHolding(pid: pid, on: connection)
        // Still the connection whose process was checked (not one that took the name meanwhile).
        guard Self.owner(on: connection) == owner else { throw PrompterError.untrustedPrompter("the owner changed while it was checked") }
        uniqueName = owner
    }

    /// The genuine prompter's process holds its connection, and holds it alone: a process that
    /// owned the name and then executed the prompter, while a child of its own kept the
    /// connection, is not the prompter (`ConnectionHolding`, the check Secret Service clients
    /// pass; docs/SECURITY.md, "Who may approve").
    /// - Throws: ``PrompterError/untrustedPrompter(_:)`` saying why.
    private static func checkHolding(pid: UInt32, on connection: DBusConnection) throws {
        guard let busAddress = connection.socketDescriptor.flatMap(UnixSockets.peerAddress(ofConnected:)) else {
            throw PrompterError.untrustedPrompter("the bus's address is not known, so the prompter's connection cannot be checked")
        }
        // Every connection the bus names for the process: the genuine prompter opens one.
        guard case .array(_, let names)? = try? connection.callBus("ListNames", []).first else {
            throw PrompterError.untrustedPrompter("the bus does not list its connections")
        }
        var connections = 0
        for case .string(let name) in names where name.hasPrefix(":") && name != connection.uniqueName {
            if case .uint32(pid)? = try? connection.callBus("GetConnectionUnixProcessID", [.string(name)]).first { connections += 1 }
        }
        if let why = ConnectionHolding.doubt(pid: Int32(bitPattern: pid), connections: connections, to: busAddress, uid: getuid()) {
            throw PrompterError.untrustedPrompter(why)
        }
    }

    static func owner(on connection: DBusConnection) -> String? {
        (try? connection.callBus("GetNameOwner", [.string(SystemPrompter.busName)]))?.first?.stringValue
    }

    static func activatable(on connection: DBusConnection) throws -> Bool {
        let names = try connection.callBus("ListActivatableNames", []).first?.elements ?? []
        return names.contains(.string(SystemPrompter.busName))
    }
}

extension Duration {
    var milliseconds: Int64 { components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000 }
}
