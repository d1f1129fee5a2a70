import Foundation
import Synchronization
import Testing
import TresorDBus
import TresorSystem
import TresorTestSupport

/// TresorDBus against a real `dbus-daemon`: a service connection answering on a thread of its
/// own, a client connection calling it.
@Suite(.blocksItsThread) struct DBusConnectionTests {
    /// Starts a service on `bus` that answers `Echo` with its arguments and `Fail` with an error.
    private func startEchoService(on bus: PrivateBus, name: String = "org.example.Echo") throws -> DBusConnection {
        let service = try DBusConnection(address: bus.address)
        #expect(try service.requestName(name))
        DetachedThread.start {
            service.run(tickMilliseconds: 60_000) { message in
                guard message.kind == .methodCall else { return }
                switch message.member {
                case "Echo": service.send(.reply(to: message, message.arguments))
                case "Fail": service.send(.error(to: message, .invalidArguments("refused on purpose")))
                default: service.send(.error(to: message, .unknownMethod("no such method")))
                }
            }
        }
        return service
    }

    @Test func valuesOfEveryKindSurviveTheRoundTrip() throws {
        let bus = try PrivateBus()
        let service = try startEchoService(on: bus)
        defer { service.stop() }
        let client = try DBusConnection(address: bus.address)
        let values: [DBusValue] = [
            .byte(7), .boolean(true), .int16(-3), .uint16(65_000), .int32(-70_000), .uint32(4_000_000_000),
            .int64(-1 << 40), .uint64(1 << 63), .double(0.25), .string("grüße ✓"), .objectPath("/org/example/a_1"),
            .signature("a{sv}"), .bytes([0, 1, 2, 255]), .bytes([]),
            .stringDictionary(["service": "git", "user": "ada"]),
            .properties(["Label": .string("x"), "Count": .uint32(2), "Nested": .objectPaths(["/a", "/b"])]),
            .structure([.objectPath("/s/1"), .bytes([9, 9]), .bytes(Array(repeating: 0xAB, count: 100_000)), .string("text/plain")]),
            .array(elementSignature: "{o(oayays)}", []),
            .variant(.variant(.int32(1))),
        ]
        let reply = try client.call(
            .methodCall(destination: "org.example.Echo", path: "/", interface: "org.example.Echo", member: "Echo", arguments: values))
        #expect(reply.arguments == values)
        #expect(reply.signature == values.map(\.signature).joined())
    }

    /// Calls sent together come back in their order, each with its own reply or error.
    @Test func callsSentTogetherAnswerInOrder() throws {
        let bus = try PrivateBus()
        let service = try startEchoService(on: bus)
        defer { service.stop() }
        let client = try DBusConnection(address: bus.address)
        func echo(_ member: String, _ value: Int32) -> DBusMessage {
            .methodCall(destination: "org.example.Echo", path: "/", interface: "org.example.Echo", member: member, arguments: [.int32(value)])
        }
        let replies = client.callAll([echo("Echo", 1), echo("Fail", 2), echo("Echo", 3), echo("Nothing", 4)])
        #expect(replies.count == 4)
        #expect(try replies[0].get().arguments == [.int32(1)])
        #expect(try replies[2].get().arguments == [.int32(3)])
        #expect(throws: DBusError.invalidArguments("refused on purpose")) { try replies[1].get() }
        #expect(throws: DBusError.unknownMethod("no such method")) { try replies[3].get() }
        #expect(client.callAll([]).isEmpty)
    }

    /// A descriptor sent to the echo service comes back as a descriptor of the caller's own:
    /// the same socket, close-on-exec, closed exactly once — and every copy on the way (the
    /// messages', the service's) closed, so the other end reads EOF once the caller's goes.
    @Test func aFileDescriptorTravelsAndIsClosedExactlyOnce() throws {
        let bus = try PrivateBus()
        let service = try startEchoService(on: bus)
        defer { service.stop() }
        let client = try DBusConnection(address: bus.address)
        let ends = try closeOnExecPair()
        let readEnd = ends[0]
        defer { close(readEnd) }
        let received: DBusFileDescriptor = try {
            let sent = DBusFileDescriptor(adopting: ends[1])
            let reply = try client.call(
                .methodCall(
                    destination: "org.example.Echo", path: "/", interface: "org.example.Echo", member: "Echo",
                    arguments: [.unixFD(sent), .string("x")]))
            #expect(reply.signature == "hs")
            return try #require(reply.arguments.first?.fileDescriptor)
        }()
        let descriptor = try #require(received.descriptorIfOpen)
        #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0, "a received descriptor is close-on-exec")
        var byte: UInt8 = 42
        #expect(write(descriptor, &byte, 1) == 1)
        byte = 0
        #expect(read(readEnd, &byte, 1) == 1 && byte == 42, "the received descriptor is the sent socket")

        let taken = try #require(received.take())
        #expect(received.take() == nil, "a descriptor is handed over once")
        close(taken)
        // The number is free again: whatever opens next may get it, and the value must not close it.
        let reused = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(reused) }
        received.close()
        #expect(fcntl(reused, F_GETFD) != -1, "closing a taken descriptor's value closes nothing")

        var hangUp = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&hangUp, 1, 5_000) == 1 && read(readEnd, &byte, 1) == 0, "every copy closed: the other end reads EOF")
    }

    /// A connected pair of sockets, close-on-exec from the start (no process a parallel test starts
    /// inherits an end and keeps it open): reading one reads EOF once every copy of the other is closed.
    private func closeOnExecPair() throws -> [Int32] {
        var ends: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
        return ends
    }

    /// A value dropped without being taken closes its descriptor.
    @Test func aDroppedDescriptorIsClosed() throws {
        let ends = try closeOnExecPair()
        defer { close(ends[0]) }
        var value: DBusValue? = .unixFD(DBusFileDescriptor(adopting: ends[1]))
        #expect(value?.signature == "h")
        value = nil
        var byte: UInt8 = 0
        #expect(read(ends[0], &byte, 1) == 0, "the write end is closed: EOF")
    }

    @Test func anErrorReplyArrivesAsThatError() throws {
        let bus = try PrivateBus()
        let service = try startEchoService(on: bus)
        defer { service.stop() }
        let client = try DBusConnection(address: bus.address)
        let call = DBusMessage.methodCall(destination: "org.example.Echo", path: "/", interface: "org.example.Echo", member: "Fail")
        #expect(throws: DBusError.invalidArguments("refused on purpose")) { try client.call(call) }
    }

    @Test func aNameTakenAlreadyIsNotTakenAgain() throws {
        let bus = try PrivateBus()
        let first = try startEchoService(on: bus)
        defer { first.stop() }
        let second = try DBusConnection(address: bus.address)
        #expect(try second.requestName("org.example.Echo") == false)
    }

    @Test func aSignalSentFromAnotherThreadGoesOutAtOnce() throws {
        let bus = try PrivateBus()
        let service = try startEchoService(on: bus)
        defer { service.stop() }
        let listener = try DBusConnection(address: bus.address)
        try listener.addMatch("type='signal',interface='org.example.Echo'")
        _ = try listener.callBus("GetId", [])  // the match is in place once the bus answered after it
        // Sent from this thread while the service's loop sleeps in poll: the wake-up pipe must
        // get it out (the loop would otherwise wait for its next tick or message).
        service.send(.signal(path: "/org/example", interface: "org.example.Echo", member: "Happened", arguments: [.string("now")]))
        let received = Mutex<DBusMessage?>(nil)
        DetachedThread.start {
            listener.run { message in
                if message.kind == .signal, message.member == "Happened" {
                    received.withLock { $0 = message }
                    listener.stop()
                }
            }
        }
        for _ in 0..<200 where received.withLock({ $0 }) == nil { usleep(10_000) }
        #expect(received.withLock { $0?.arguments } == [.string("now")])
        listener.stop()
    }
}
