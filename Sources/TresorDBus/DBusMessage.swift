import CDBus
import FoundationEssentials

/// One D-Bus message, owned (libdbus's reference is dropped with it).
///
/// Incoming messages were validated by libdbus (signatures, UTF-8, object paths, nesting
/// depth); ``arguments`` turns their body into ``DBusValue``s.
public final class DBusMessage: @unchecked Sendable {
    let raw: OpaquePointer

    /// Adopts a reference libdbus handed over.
    init(adopting raw: OpaquePointer) {
        self.raw = raw
    }

    deinit { dbus_message_unref(raw) }

    public enum Kind: Sendable { case methodCall, methodReturn, error, signal, other }

    public var kind: Kind {
        switch dbus_message_get_type(raw) {
        case DBUS_MESSAGE_TYPE_METHOD_CALL: return .methodCall
        case DBUS_MESSAGE_TYPE_METHOD_RETURN: return .methodReturn
        case DBUS_MESSAGE_TYPE_ERROR: return .error
        case DBUS_MESSAGE_TYPE_SIGNAL: return .signal
        default: return .other
        }
    }

    public var path: String? { dbus_message_get_path(raw).map { String(cString: $0) } }
    public var interface: String? { dbus_message_get_interface(raw).map { String(cString: $0) } }
    public var member: String? { dbus_message_get_member(raw).map { String(cString: $0) } }
    /// The unique bus name of the connection that sent it (`:1.42`).
    public var sender: String? { dbus_message_get_sender(raw).map { String(cString: $0) } }
    /// The unique bus name it is addressed to, if any.
    public var destination: String? { dbus_message_get_destination(raw).map { String(cString: $0) } }
    public var signature: String { dbus_message_get_signature(raw).map { String(cString: $0) } ?? "" }
    /// For an error message: its error name.
    public var errorName: String? { dbus_message_get_error_name(raw).map { String(cString: $0) } }
    public var expectsReply: Bool { dbus_message_get_no_reply(raw) == 0 }

    /// The body's values, in order.
    public var arguments: [DBusValue] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iterator) != 0 else { return [] }
        var values: [DBusValue] = []
        repeat {
            guard let value = Self.read(&iterator) else { break }
            values.append(value)
        } while dbus_message_iter_next(&iterator) != 0
        return values
    }

    // MARK: Wire form

    /// A message read from its wire form, validated by libdbus (header, signature, body).
    /// - Parameter bytes: one whole marshalled message.
    /// - Throws: ``DBusError`` (`InvalidArgs`) when libdbus refuses the bytes.
    public convenience init(marshalled bytes: [UInt8]) throws {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let message = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.flatMap { base in
                base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { dbus_message_demarshal($0, Int32(buffer.count), &error) }
            }
        }
        guard let message else { throw DBusError.invalidArguments("not a D-Bus message") }
        self.init(adopting: message)
    }

    /// This message's wire form. A message not sent yet has no serial, which the wire form
    /// needs (libdbus refuses to read it back): it gets serial 1.
    public func marshalled() -> [UInt8] {
        if dbus_message_get_serial(raw) == 0 { dbus_message_set_serial(raw, 1) }
        var pointer: UnsafeMutablePointer<CChar>?
        var count: Int32 = 0
        guard dbus_message_marshal(raw, &pointer, &count) != 0, let pointer else { return [] }
        defer { dbus_free(pointer) }
        return pointer.withMemoryRebound(to: UInt8.self, capacity: Int(count)) { Array(UnsafeBufferPointer(start: $0, count: Int(count))) }
    }

    // MARK: Making messages

    /// A method call to `destination`.
    public static func methodCall(destination: String, path: String, interface: String, member: String, arguments: [DBusValue] = []) -> DBusMessage {
        let message = DBusMessage(adopting: dbus_message_new_method_call(destination, path, interface, member)!)
        message.append(arguments)
        return message
    }

    /// A method call to the bus itself (`org.freedesktop.DBus`).
    public static func busCall(_ member: String, _ arguments: [DBusValue] = []) -> DBusMessage {
        methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: member,
            arguments: arguments)
    }

    /// The successful reply to `call`.
    public static func reply(to call: DBusMessage, _ arguments: [DBusValue] = []) -> DBusMessage {
        let message = DBusMessage(adopting: dbus_message_new_method_return(call.raw)!)
        message.append(arguments)
        return message
    }

    /// An error reply to `call`.
    public static func error(to call: DBusMessage, _ error: DBusError) -> DBusMessage {
        DBusMessage(adopting: dbus_message_new_error(call.raw, error.name, Self.clean(error.message))!)
    }

    /// A signal from `path`; with a `destination`, only that connection receives it.
    public static func signal(path: String, interface: String, member: String, arguments: [DBusValue] = [], destination: String? = nil) -> DBusMessage
    {
        let message = DBusMessage(adopting: dbus_message_new_signal(path, interface, member)!)
        if let destination { dbus_message_set_destination(message.raw, destination) }
        message.append(arguments)
        return message
    }

    private func append(_ values: [DBusValue]) {
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(raw, &iterator)
        for value in values { Self.write(value, to: &iterator) }
    }

    // MARK: Reading

    private static func read(_ iterator: inout DBusMessageIter) -> DBusValue? {
        let type = dbus_message_iter_get_arg_type(&iterator)
        switch UInt8(truncatingIfNeeded: type) {
        case ascii("y"): return .byte(basic(&iterator, UInt8(0)))
        case ascii("b"): return .boolean(basic(&iterator, dbus_bool_t(0)) != 0)
        case ascii("n"): return .int16(basic(&iterator, Int16(0)))
        case ascii("q"): return .uint16(basic(&iterator, UInt16(0)))
        case ascii("i"): return .int32(basic(&iterator, Int32(0)))
        case ascii("u"): return .uint32(basic(&iterator, UInt32(0)))
        case ascii("x"): return .int64(basic(&iterator, Int64(0)))
        case ascii("t"): return .uint64(basic(&iterator, UInt64(0)))
        case ascii("d"): return .double(basic(&iterator, Double(0)))
        case ascii("s"): return .string(string(&iterator))
        case ascii("o"): return .objectPath(string(&iterator))
        case ascii("g"): return .signature(string(&iterator))
        case ascii("h"):
            // libdbus hands out a duplicate (close-on-exec) that the reader owns.
            let descriptor = basic(&iterator, Int32(-1))
            return descriptor >= 0 ? .unixFD(DBusFileDescriptor(adopting: descriptor)) : nil
        case ascii("v"):
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            return read(&inner).map { .variant($0) }
        case ascii("a"):
            let elementType = dbus_message_iter_get_element_type(&iterator)
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            if elementType == Int32(ascii("y")) {
                var pointer: UnsafeRawPointer?
                var count: Int32 = 0
                withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_fixed_array(&inner, $0, &count) }
                guard let pointer, count > 0 else { return .bytes([]) }
                return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: Int(count))))
            }
            let arraySignature = signatureOf(&iterator)
            var elements: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&inner) != 0 {
                guard let element = read(&inner) else { return nil }
                elements.append(element)
                dbus_message_iter_next(&inner)
            }
            return .array(elementSignature: String(arraySignature.dropFirst()), elements)
        case ascii("r"), ascii("("), ascii("e"), ascii("{"):
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            var fields: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&inner) != 0 {
                guard let field = read(&inner) else { return nil }
                fields.append(field)
                dbus_message_iter_next(&inner)
            }
            if type == Int32(ascii("e")) || type == Int32(ascii("{")) {
                guard fields.count == 2 else { return nil }
                return .dictEntry(fields[0], fields[1])
            }
            return .structure(fields)
        default:
            return nil
        }
    }

    private static func basic<T>(_ iterator: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        withUnsafeMutableBytes(of: &value) { dbus_message_iter_get_basic(&iterator, $0.baseAddress) }
        return value
    }

    private static func string(_ iterator: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>?
        withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_basic(&iterator, UnsafeMutableRawPointer($0)) }
        return pointer.map { String(cString: $0) } ?? ""
    }

    private static func signatureOf(_ iterator: inout DBusMessageIter) -> String {
        guard let signature = dbus_message_iter_get_signature(&iterator) else { return "" }
        defer { dbus_free(signature) }
        return String(cString: signature)
    }

    // MARK: Writing

    private static func write(_ value: DBusValue, to iterator: inout DBusMessageIter) {
        switch value {
        case .byte(let value): appendBasic(&iterator, "y", value)
        case .boolean(let value): appendBasic(&iterator, "b", dbus_bool_t(value ? 1 : 0))
        case .int16(let value): appendBasic(&iterator, "n", value)
        case .uint16(let value): appendBasic(&iterator, "q", value)
        case .int32(let value): appendBasic(&iterator, "i", value)
        case .uint32(let value): appendBasic(&iterator, "u", value)
        case .int64(let value): appendBasic(&iterator, "x", value)
        case .uint64(let value): appendBasic(&iterator, "t", value)
        case .double(let value): appendBasic(&iterator, "d", value)
        case .string(let value): appendString(&iterator, "s", clean(value))
        case .objectPath(let value): appendString(&iterator, "o", value)
        case .signature(let value): appendString(&iterator, "g", value)
        case .bytes(let bytes):
            var inner = DBusMessageIter()
            dbus_message_iter_open_container(&iterator, Int32(ascii("a")), "y", &inner)
            bytes.withUnsafeBufferPointer { buffer in
                var pointer = buffer.baseAddress
                if pointer == nil { pointer = UnsafePointer(bitPattern: 1) }  // libdbus wants a pointer even for none
                _ = withUnsafePointer(to: &pointer) { dbus_message_iter_append_fixed_array(&inner, Int32(ascii("y")), $0, Int32(buffer.count)) }
            }
            dbus_message_iter_close_container(&iterator, &inner)
        case .array(let element, let elements):
            var inner = DBusMessageIter()
            dbus_message_iter_open_container(&iterator, Int32(ascii("a")), element, &inner)
            for element in elements { write(element, to: &inner) }
            dbus_message_iter_close_container(&iterator, &inner)
        case .dictEntry(let key, let entryValue):
            var inner = DBusMessageIter()
            dbus_message_iter_open_container(&iterator, Int32(ascii("e")), nil, &inner)
            write(key, to: &inner)
            write(entryValue, to: &inner)
            dbus_message_iter_close_container(&iterator, &inner)
        case .structure(let fields):
            var inner = DBusMessageIter()
            dbus_message_iter_open_container(&iterator, Int32(ascii("r")), nil, &inner)
            for field in fields { write(field, to: &inner) }
            dbus_message_iter_close_container(&iterator, &inner)
        case .unixFD(let descriptor):
            // libdbus appends a duplicate; a closed descriptor (-1) is refused and leaves the message unsendable.
            appendBasic(&iterator, "h", descriptor.descriptorIfOpen ?? -1)
        case .variant(let contained):
            var inner = DBusMessageIter()
            dbus_message_iter_open_container(&iterator, Int32(ascii("v")), contained.signature, &inner)
            write(contained, to: &inner)
            dbus_message_iter_close_container(&iterator, &inner)
        }
    }

    private static func appendBasic<T>(_ iterator: inout DBusMessageIter, _ type: Character, _ value: T) {
        var value = value
        withUnsafeBytes(of: &value) { _ = dbus_message_iter_append_basic(&iterator, Int32(type.asciiValue!), $0.baseAddress) }
    }

    private static func appendString(_ iterator: inout DBusMessageIter, _ type: Character, _ value: String) {
        value.withCString { pointer in
            var pointer: UnsafePointer<CChar>? = pointer
            withUnsafePointer(to: &pointer) { _ = dbus_message_iter_append_basic(&iterator, Int32(type.asciiValue!), $0) }
        }
    }

    /// D-Bus strings cannot hold NUL; one stored through another interface is replaced.
    static func clean(_ string: String) -> String {
        string.contains("\0") ? string.replacing("\0", with: "\u{FFFD}") : string
    }
}

@inline(__always) private func ascii(_ character: Unicode.Scalar) -> UInt8 { UInt8(character.value) }
