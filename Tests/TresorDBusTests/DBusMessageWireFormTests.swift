import Testing
import TresorDBus

/// A message's wire form (`DBusMessage.marshalled()`, what the `dbus-message` fuzz target writes
/// its seeds and its round trip with) is one libdbus reads back: a message not sent yet gets a
/// serial, without which libdbus refuses it as corrupted.
@Suite struct DBusMessageWireFormTests {
    @Test func aMessageNotSentYetReadsBackFromItsWireForm() throws {
        let arguments: [DBusValue] = [.string("dh-ietf1024-sha256-aes128-cbc-pkcs7"), .variant(.bytes([7, 7, 7]))]
        for message in [
            DBusMessage.signal(path: "/org/example", interface: "org.example.Wire", member: "Changed", arguments: arguments),
            DBusMessage.signal(path: "/org/example", interface: "org.example.Wire", member: "Empty"),
            DBusMessage.methodCall(
                destination: "org.freedesktop.secrets", path: "/org/freedesktop/secrets", interface: "org.freedesktop.Secret.Service",
                member: "OpenSession", arguments: arguments),
        ] {
            let read = try DBusMessage(marshalled: message.marshalled())
            #expect("\(read.arguments)" == "\(message.arguments)")
            #expect(read.signature == message.signature)
        }
    }
}
