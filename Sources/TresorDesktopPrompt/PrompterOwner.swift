import Foundation
import Synchronization
import TresorDBus
import TresorSystem

/// The connection that owns the prompter's bus name, checked to run a trusted prompter.
struct PrompterOwner {
    /// Its unique name (`:1.7`): where every question goes.
    let uniqueName: String
    let process: PrompterProcess

    /// Finds and checks the prompter, starting it through the bus when `start` and it is activatable.
    /// - Throws: ``PrompterError/noPrompter`` or ``PrompterError/untrustedPrompter(_:)``.
    /// - Parameters:
    ///   - connection: a connection of ours to the session bus.
    ///   - trusted: the prompter executables to accept.
    ///   - start: whether to have the bus start the prompter when nobody owns its name.
    ///   - deadline: when to give up starting it.
    ///   - holding: the connection whose hold was checked before, not checked again.
    init(
        on connection: DBusConnection, trusted: [String], start: Bool, deadline: ContinuousClock.Instant, holding: CheckedPrompterConnection
    ) throws {
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
                    .busCall("StartServiceByName", [.string(SystemPrompter.busName), .uint32(0)]), timeoutMilliseconds: waitMilliseconds)
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
        let held = holding.wasChecked(owner, pid: process.pid)
        if !held { try Self.checkHolding(pid: pid, on: connection) }
        // Still the connection whose process was checked (not one that took the name meanwhile).
        guard Self.owner(on: connection) == owner else { throw PrompterError.untrustedPrompter("the owner changed while it was checked") }
        if !held { holding.remember(owner, pid: process.pid) }
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
        let questions = names.compactMap(\.stringValue).filter { $0.hasPrefix(":") && $0 != connection.uniqueName }.map {
            DBusMessage.busCall("GetConnectionUnixProcessID", [.string($0)])
        }
        // A connection that left meanwhile answers an error: it is nobody's.
        let connections = connection.callAll(questions).count { (try? $0.get())?.arguments.first == .uint32(pid) }
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

/// The prompter connection whose hold on its socket was checked last (`ConnectionHolding`): the
/// socket checks are made once per connection, as for the Secret Service's clients — a unique name
/// is never given to another connection, and a borrow needs the name's owner to be the borrowed
/// connection when it is checked. Checked again when the name has another owner, or its process
/// another image (it executed another program, or the pid is another process's now).
final class CheckedPrompterConnection: Sendable {
    private let last = Mutex<(uniqueName: String, image: ProcessImage)?>(nil)

    init() {}

    /// Whether `uniqueName`, whose process is `pid`, is the connection checked last, its process unchanged.
    func wasChecked(_ uniqueName: String, pid: Int32) -> Bool {
        guard let checked = last.withLock({ $0 }), checked.uniqueName == uniqueName else { return false }
        return ProcessImage.of(pid: pid) == checked.image
    }

    /// `uniqueName`'s hold was checked: remembers it with its process's image now.
    func remember(_ uniqueName: String, pid: Int32) {
        guard let image = ProcessImage.of(pid: pid) else { return }
        last.withLock { $0 = (uniqueName, image) }
    }
}
