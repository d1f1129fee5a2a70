/// A D-Bus error reply: its name (`org.freedesktop.DBus.Error.InvalidArgs`) and a message for
/// people. Messages name what was wrong with a request, never a secret or a value it carried.
public struct DBusError: Error, Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var message: String

    public init(_ name: String, _ message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }

    /// The arguments do not have the method's signature or meaning.
    public static func invalidArguments(_ message: String) -> DBusError {
        DBusError("org.freedesktop.DBus.Error.InvalidArgs", message)
    }

    public static func unknownMethod(_ message: String) -> DBusError {
        DBusError("org.freedesktop.DBus.Error.UnknownMethod", message)
    }

    public static func unknownObject(_ path: String) -> DBusError {
        DBusError("org.freedesktop.DBus.Error.UnknownObject", "no object at \(path.prefix(200))")
    }

    public static func unknownProperty(_ message: String) -> DBusError {
        DBusError("org.freedesktop.DBus.Error.UnknownProperty", message)
    }

    public static func accessDenied(_ message: String) -> DBusError {
        DBusError("org.freedesktop.DBus.Error.AccessDenied", message)
    }

    public static func limitsExceeded(_ message: String) -> DBusError {
        DBusError("org.freedesktop.DBus.Error.LimitsExceeded", message)
    }

    public static func failed(_ message: String) -> DBusError {
        DBusError("org.freedesktop.DBus.Error.Failed", message)
    }
}
