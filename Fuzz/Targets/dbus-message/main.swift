import Foundation
// Fuzzes what the Secret Service reads from the bus: a D-Bus message in its wire form,
// validated by libdbus, then read into `DBusValue`s by TresorDBus's own code (the iterator
// walk in `DBusMessage.arguments`) — the values every Secret Service method is answered from.
//
// Properties besides "never crash":
//  - what was read writes back: the arguments, put into a new message, marshalled and read
//    again, are the same values with the same signature (a value read wrongly — a wrong element
//    signature, a lost byte array, a dict entry read as a struct — would differ);
//  - the signature read off the values is the message's own.
//
// Input: one marshalled message.
import FuzzSupport
import TresorDBus

fuzz(seeds: {
    let samples: [String: [DBusValue]] = [
        "open-session": [.string("dh-ietf1024-sha256-aes128-cbc-pkcs7"), .variant(.bytes(Array(repeating: 7, count: 128)))],
        "search-items": [.stringDictionary(["service": "git", "user": "ada", "xdg:schema": "org.gnome.keyring.NetworkPassword"])],
        "create-item": [
            .properties([
                "org.freedesktop.Secret.Item.Label": .string("GitHub"), "org.freedesktop.Secret.Item.Attributes": .stringDictionary(["a": "b"]),
            ]),
            .structure([.objectPath("/org/freedesktop/secrets/session/1"), .bytes([]), .bytes(Array("s3cret".utf8)), .string("text/plain")]),
            .boolean(true),
        ],
        "get-secrets": [.objectPaths(["/org/freedesktop/secrets/collection/login/1"]), .objectPath("/org/freedesktop/secrets/session/1")],
        "numbers": [
            .byte(1), .int16(-2), .uint16(3), .int32(-4), .uint32(5), .int64(-6), .uint64(7), .double(8.5), .signature("a{sv}"),
            .variant(.variant(.int32(9))),
        ],
    ]
    var seeds: [String: Data] = [:]
    for (name, arguments) in samples {
        let message = DBusMessage.methodCall(
            destination: "org.freedesktop.secrets", path: "/org/freedesktop/secrets", interface: "org.freedesktop.Secret.Service", member: "X",
            arguments: arguments)
        seeds[name] = Data(message.marshalled())
    }
    return seeds
}) { data in
    guard let message = try? DBusMessage(marshalled: Array(data)) else { return }
    let arguments = message.arguments
    let read = arguments.map(\.signature).joined()
    guard read == message.signature else {
        // Reading stops at a type the Secret Service never uses (a file descriptor): what was
        // read must then be the start of the body, never something else.
        if !message.signature.hasPrefix(read) { fuzzFailure("values read with signature \(read) from a \(message.signature) body") }
        return
    }
    let again = DBusMessage.signal(path: "/fuzz", interface: "org.example.Fuzz", member: "Again", arguments: arguments)
    guard let reread = try? DBusMessage(marshalled: again.marshalled()) else {
        fuzzFailure("values read from a valid message did not write back"); return
    }
    // Compared as text, where a NaN equals itself.
    if "\(reread.arguments)" != "\(arguments)" { fuzzFailure("values changed on the way back through libdbus") }
}
