/// The daemon's local API: HTTP/1.1 + JSON over the Unix socket, every path under
/// `/v<version>/`. Described in `docs/API.md` and `docs/openapi.yaml`.
///
/// A change that removes or renames a field or route makes a new version; adding optional
/// fields does not.
public enum APIVersion {
    public static let current = 1
    public static let pathPrefix = "/v1"
    /// Requests larger than this are refused with `requestTooLarge` (room for a 256 KiB
    /// secret in Base64 and its attributes).
    public static let maximumRequestBytes = 1024 * 1024
}

/// The routes of version 1, so client and server spell them once.
public enum Route {
    public static let status = "/v1/status"
    public static let initialize = "/v1/init"
    public static let unlock = "/v1/unlock"
    public static let lock = "/v1/lock"
    public static let changePasscode = "/v1/passcode/change"
    public static let removePasscode = "/v1/passcode/remove"
    public static let holds = "/v1/holds"
    public static let doctor = "/v1/doctor"
    public static let addItem = "/v1/items/add"
    public static let searchItems = "/v1/items/search"
    public static let updateItems = "/v1/items/update"
    public static let deleteItems = "/v1/items/delete"
    public static let applications = "/v1/apps"
    public static let keychains = "/v1/keychains"
    public static let deleteKeychain = "/v1/keychains/delete"
}
