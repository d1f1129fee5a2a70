import CDBus
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A private connection to a message bus, driven by one thread of its own.
///
/// libdbus is used from a single thread: ``run(_:)`` reads, hands each message to its handler
/// and writes replies, all on the thread that called it. Other threads hand messages to
/// ``send(_:)``, which queues them and wakes that thread — so a signal raised elsewhere (a
/// keybag unlocked) goes out at once without two threads ever inside libdbus together.
public final class DBusConnection: @unchecked Sendable {
    private let raw: OpaquePointer
    /// This connection's unique name on the bus (`:1.7`).
    public let uniqueName: String
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let outbox = Mutex<[DBusMessage]>([])
    private let stopped = Atomic<Bool>(false)
    private let loopThread = Mutex<pthread_t?>(nil)

    /// Connects to the bus at `address` (a D-Bus address such as `unix:path=/run/user/1000/bus`).
    /// - Throws: ``DBusError`` when the bus cannot be reached or refuses the connection.
    public init(address: String) throws {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let connection = dbus_connection_open_private(address, &error) else {
            throw DBusError.failed("cannot connect to the bus: \(Self.text(of: error))")
        }
        // A bus that goes away must not take the daemon with it.
        dbus_connection_set_exit_on_disconnect(connection, 0)
        guard dbus_bus_register(connection, &error) != 0, let name = dbus_bus_get_unique_name(connection) else {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            throw DBusError.failed("the bus refused the connection: \(Self.text(of: error))")
        }
        raw = connection
        uniqueName = String(cString: name)
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { throw DBusError.failed("cannot create a wake-up pipe (errno \(errno))") }
        for fd in pipe {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        (wakeRead, wakeWrite) = (pipe[0], pipe[1])
    }

    deinit {
        dbus_connection_close(raw)
        dbus_connection_unref(raw)
        close(wakeRead)
        close(wakeWrite)
    }

    /// The session bus's address from the environment (`DBUS_SESSION_BUS_ADDRESS`).
    public static func sessionBusAddress(_ environment: [String: String]) -> String? {
        environment["DBUS_SESSION_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
    }

    // MARK: Bus calls (before run, or from the handler on the loop thread)

    /// Asks to own `name` without queueing behind its present owner.
    /// - Returns: whether this connection now owns it (false: another connection does).
    public func requestName(_ name: String) throws -> Bool {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let result = dbus_bus_request_name(raw, name, UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE), &error)
        if result < 0 { throw DBusError.failed("cannot request \(name): \(Self.text(of: error))") }
        return result == DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER || result == DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER
    }

    /// Subscribes to messages matching `rule` (a D-Bus match rule).
    public func addMatch(_ rule: String) throws {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        dbus_bus_add_match(raw, rule, &error)
        if dbus_error_is_set(&error) != 0 { throw DBusError.failed("cannot add a match rule: \(Self.text(of: error))") }
    }

    /// Sends `message` and waits for its reply. Call it before ``run(_:)`` or from the handler:
    /// messages that arrive meanwhile stay queued for the loop.
    /// - Throws: ``DBusError`` with the error the other side replied, or a timeout.
    public func call(_ message: DBusMessage, timeoutMilliseconds: Int32 = 5_000) throws -> DBusMessage {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let reply = dbus_connection_send_with_reply_and_block(raw, message.raw, timeoutMilliseconds, &error) else {
            throw Self.error(error)
        }
        return DBusMessage(adopting: reply)
    }

    /// Sends every message of `messages` at once, then waits for their replies: one round trip
    /// for all of them, where ``call(_:timeoutMilliseconds:)`` in turn waits for each.
    /// - Parameters:
    ///   - messages: method calls.
    ///   - timeoutMilliseconds: how long each reply is waited for.
    /// - Returns: each call's reply, or the error it got, in the order of `messages`.
    public func callAll(_ messages: [DBusMessage], timeoutMilliseconds: Int32 = 5_000) -> [Result<DBusMessage, DBusError>] {
        let pending = messages.map { message -> OpaquePointer? in
            var call: OpaquePointer?
            return dbus_connection_send_with_reply(raw, message.raw, &call, timeoutMilliseconds) != 0 ? call : nil
        }
        return pending.map { call in
            guard let call else { return .failure(DBusError.failed("the call could not be sent")) }
            defer { dbus_pending_call_unref(call) }
            dbus_pending_call_block(call)
            guard let raw = dbus_pending_call_steal_reply(call) else { return .failure(DBusError.failed("no reply")) }
            let reply = DBusMessage(adopting: raw)
            var error = CDBus.DBusError()
            dbus_error_init(&error)
            defer { dbus_error_free(&error) }
            guard dbus_set_error_from_message(&error, raw) == 0 else { return .failure(Self.error(error)) }
            return .success(reply)
        }
    }

    /// A call to the bus itself (`org.freedesktop.DBus`).
    public func callBus(_ member: String, _ arguments: [DBusValue]) throws -> [DBusValue] {
        try call(.busCall(member, arguments)).arguments
    }

    /// The socket this connection speaks on, or nil when it has none (a connection not over a
    /// Unix socket).
    public var socketDescriptor: Int32? {
        var fd: Int32 = -1
        return dbus_connection_get_unix_fd(raw, &fd) != 0 ? fd : nil
    }

    // MARK: Sending

    /// Sends `message` without waiting for a reply, from any thread.
    public func send(_ message: DBusMessage) {
        if let loop = loopThread.withLock({ $0 }), pthread_equal(loop, pthread_self()) != 0 {
            dbus_connection_send(raw, message.raw, nil)
            return
        }
        outbox.withLock { $0.append(message) }
        wake()
    }

    // MARK: The loop

    /// Reads and handles messages on the calling thread until ``stop()`` or until the bus
    /// disconnects. `handle` runs for every message, on this thread; `tick` after every turn
    /// of the loop, and at least every `tickMilliseconds` (for work that waits on time or on
    /// the rest of the daemon, such as prompts).
    public func run(tickMilliseconds: Int32 = 1_000, tick: () -> Void = {}, _ handle: (DBusMessage) -> Void) {
        loopThread.withLock { $0 = pthread_self() }
        var busFD: Int32 = -1
        guard dbus_connection_get_unix_fd(raw, &busFD) != 0 else { return }
        while !stopped.load(ordering: .acquiring) {
            for message in outbox.withLock({ queued in
                defer { queued.removeAll() }; return queued
            }) {
                dbus_connection_send(raw, message.raw, nil)
            }
            dbus_connection_read_write(raw, 0)
            while let incoming = dbus_connection_pop_message(raw) {
                handle(DBusMessage(adopting: incoming))
            }
            tick()
            guard dbus_connection_get_is_connected(raw) != 0 else { return }
            if dbus_connection_get_dispatch_status(raw) == DBUS_DISPATCH_DATA_REMAINS { continue }
            let writing = dbus_connection_has_messages_to_send(raw) != 0
            var fds = [
                pollfd(fd: busFD, events: Int16(POLLIN) | (writing ? Int16(POLLOUT) : 0), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            _ = poll(&fds, 2, tickMilliseconds)
            var drain = [UInt8](repeating: 0, count: 64)
            while read(wakeRead, &drain, drain.count) > 0 {}
        }
    }

    /// Ends ``run(tickMilliseconds:tick:_:)`` at its next turn.
    public func stop() {
        stopped.store(true, ordering: .releasing)
        wake()
    }

    /// Has the loop take a turn now (and so run its `tick`).
    public func wake() {
        var one: UInt8 = 1
        _ = write(wakeWrite, &one, 1)
    }

    /// libdbus's error as ours: its name (`Failed` when it has none) and message.
    private static func error(_ error: CDBus.DBusError) -> DBusError {
        DBusError(error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed", text(of: error))
    }

    private static func text(of error: CDBus.DBusError) -> String {
        error.message.map { String(cString: $0) } ?? "unknown error"
    }
}
