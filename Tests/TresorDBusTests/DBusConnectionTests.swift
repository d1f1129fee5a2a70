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
        let reply = try client.call(.methodCall(destination: "org.example.Echo", path: "/", interface: "org.example.Echo", member: "Echo", arguments: values))
        #expect(reply.arguments == values)
        #expect(reply.signature == values.map(\.signature).joined())
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
