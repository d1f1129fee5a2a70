import FoundationEssentials
import Synchronization
import TresorProtocol
import TresorSystem

#if canImport(Glibc)
import Glibc
#endif

/// A connection to the Tresor daemon of one home.
///
/// ```swift
/// import TresorKit
///
/// let tresor = try TresorClient.connect()               // starts tresord if needed
/// try tresor.unlock(passcode: "correct horse battery")
/// print(try tresor.status().keybag)                    // unlocked
/// ```
///
/// Calls block until the daemon answers. Errors the daemon reports are thrown as `APIError`
/// (with Apple's `OSStatus` in `osStatus`); connection trouble as ``TresorClientError``.
/// One client is one connection: auto-lock holds made through it end when it is released.
/// The daemon closes a connection that stays unused for a while (docs/API.md, "Connections"):
/// a client idle for half that time opens a new one for its next call, unless it holds auto-lock
/// off — that connection the daemon keeps. A client may be shared between threads; its calls
/// then take turns on the connection (``Keychain`` and ``Notes`` open more connections when
/// calls overlap).
public final class TresorClient: Sendable {
    /// The home whose daemon this client talks to, and its socket.
    public let paths: TresorPaths
    /// How long any one read or write waits for the daemon.
    public let timeout: Duration
    /// One request at a time on the socket.
    private let connection: Mutex<Connection>
    private let encoder = APICoding.encoder
    private let decoder = APICoding.decoder

    /// The socket, and how many auto-lock holds made through it still run.
    private struct Connection {
        var http: UnixSocketHTTP
        var holds = 0
    }

    private init(paths: TresorPaths, timeout: Duration, http: consuming sending UnixSocketHTTP) {
        self.paths = paths
        self.timeout = timeout
        self.connection = Mutex(Connection(http: http))
    }

    /// How long a client waits for the daemon before it gives up: `TRESOR_TIMEOUT` seconds
    /// when set, else 60 (a PBKDF2 run or a large upload is seconds; a stuck daemon is forever).
    public static var defaultTimeout: Duration {
        let seconds = ProcessInfo.processInfo.environment["TRESOR_TIMEOUT"].flatMap(Int.init) ?? 60
        return .seconds(max(1, seconds))
    }

    /// Connects to the daemon of `paths.home`, starting it first when none answers and
    /// `startDaemon` is true.
    /// - Parameters:
    ///   - paths: the home and its socket.
    ///   - startDaemon: whether to start `tresord` when none answers.
    ///   - timeout: how long any one read or write may wait for the daemon.
    /// - Returns: a client on its own connection.
    /// - Throws: ``TresorClientError`` when no daemon answers, it runs as another user, or it
    ///   does not start.
    public static func connect(paths: TresorPaths = TresorPaths(), startDaemon: Bool = true, timeout: Duration = defaultTimeout) throws
        -> TresorClient
    {
        let socket = paths.socket.path
        do {
            return TresorClient(paths: paths, timeout: timeout, http: try UnixSocketHTTP(path: socket, timeout: timeout))
        } catch TresorClientError.daemonNotRunning where startDaemon {
            try DaemonLauncher.start(paths: paths)
        }
        // The daemon opens its socket within milliseconds; allow a slow machine 10 s.
        let deadline = Date().addingTimeInterval(10)
        while true {
            do {
                return TresorClient(paths: paths, timeout: timeout, http: try UnixSocketHTTP(path: socket, timeout: timeout))
            } catch TresorClientError.daemonNotRunning where Date() < deadline {
                usleep(20_000)
            } catch TresorClientError.daemonNotRunning {
                throw TresorClientError.daemonDidNotStart(log: paths.daemonLog.path)
            }
        }
    }

    // MARK: Keybag

    /// The daemon's and the keybag's state. Asking is not activity: polling it never keeps
    /// the keybag from auto-locking (docs/API.md, "Auto-lock and holds").
    /// - Returns: the login keybag's lock state, passcode and failed attempts, the created
    ///   keychains' states, auto-lock and its holds; a damaged keybag shows here (`problem`)
    ///   rather than as an error.
    /// - Throws: ``TresorClientError`` when the daemon cannot be reached or does not answer.
    public func status() throws -> DaemonStatus { try call("GET", Route.status) }

    /// Creates the keybag of a new home, with a passcode or (nil) without one.
    /// - Parameter passcode: the new keybag's passcode, or nil for none.
    /// - Returns: the daemon's status, the new keybag unlocked.
    /// - Throws: `APIError` (`alreadyInitialized` for a home that has a keybag, even a damaged
    ///   one; `param` for an empty or over-long passcode), or ``TresorClientError``.
    @discardableResult
    public func initialize(passcode: String?) throws -> DaemonStatus {
        try call("POST", Route.initialize, InitRequest(passcode: passcode))
    }

    /// Unlocks the login keybag, or the keychain called `keychain`.
    /// - Parameters:
    ///   - passcode: its passcode, or nil when it has none.
    ///   - keychain: a keychain the user created, or nil for the login keybag (which unlocks
    ///     no created keychain).
    /// - Returns: the daemon's status.
    /// - Throws: `APIError` (`authFailed` for a wrong passcode, counted; `throttled` while a
    ///   wait runs after too many; `passcodeRequired` for nil when one is set;
    ///   `noSuchKeychain`, `notInitialized`), or ``TresorClientError``.
    @discardableResult
    public func unlock(passcode: String?, keychain: String? = nil) throws -> DaemonStatus {
        try call("POST", Route.unlock, UnlockRequest(passcode: passcode, keychain: keychain))
    }

    /// Unlocks like ``unlock(passcode:keychain:)`` and opens a terminal session: for `seconds`
    /// (at most an hour), the `tresor` tool run from this process's terminal reveals secrets of
    /// that keychain without asking for the passcode again. For the `tresor` tool only.
    /// - Parameters:
    ///   - passcode: its passcode.
    ///   - keychain: a keychain the user created, or nil for the login keybag.
    ///   - terminalSessionSeconds: how long the terminal session lasts, 1 s to an hour.
    /// - Returns: the daemon's status, with the session in `terminalSessions`.
    /// - Throws: `APIError` (`param` without a terminal, `noPasscodeSet`, `authFailed`…).
    @discardableResult
    package func unlock(passcode: String?, keychain: String? = nil, terminalSessionSeconds: Int) throws -> DaemonStatus {
        try call("POST", Route.unlock, UnlockRequest(passcode: passcode, keychain: keychain, terminalSessionSeconds: terminalSessionSeconds))
    }

    /// Locks every keychain, or only the one called `keychain`. Locking the login keybag also
    /// ends the notes' secure sessions and the local account's web sessions.
    /// - Parameter keychain: `login` or a keychain the user created; nil locks every one, as
    ///   auto-lock does.
    /// - Returns: the daemon's status.
    /// - Throws: `APIError` (`noSuchKeychain`, `notInitialized`), or ``TresorClientError``.
    @discardableResult
    public func lock(keychain: String? = nil) throws -> DaemonStatus {
        try call("POST", Route.lock, LockRequest(keychain: keychain))
    }

    /// Sets a first passcode (`current` nil) or changes it. Re-wraps class keys only: no item
    /// is re-encrypted, and a crash leaves the old or the new passcode working.
    /// - Parameters:
    ///   - current: the passcode now, or nil to set a first one (a created keychain always
    ///     needs it).
    ///   - new: the new passcode.
    ///   - keychain: a keychain the user created, or nil for the login keybag.
    /// - Returns: the daemon's status.
    /// - Throws: `APIError` (`authFailed` for a wrong `current`, counted; `passcodeRequired`
    ///   without it when one is set; `throttled`; `param` for an empty or over-long `new`),
    ///   or ``TresorClientError``.
    @discardableResult
    public func changePasscode(current: String?, new: String, keychain: String? = nil) throws -> DaemonStatus {
        try call("POST", Route.changePasscode, ChangePasscodeRequest(current: current, new: new, keychain: keychain))
    }

    /// Ties the login keybag to the login password, so the PAM module unlocks it at login
    /// (docs/SECURITY.md, "Unlock at login"). For the `tresor` tool.
    /// - Parameters:
    ///   - passcode: the keybag's passcode.
    ///   - loginPassword: the user's login password; never stored.
    /// - Returns: the daemon's status, with the link.
    /// - Throws: `APIError` (`authFailed` for a wrong passcode, `noPasscodeSet`…).
    @discardableResult
    package func linkLogin(passcode: String, loginPassword: String) throws -> DaemonStatus {
        try call("POST", Route.loginLink, LinkLoginRequest(passcode: passcode, loginPassword: loginPassword))
    }

    /// Unlocks the login keybag with the login password, through the login link: what the PAM
    /// module does at login. A password that does not open it is never a wrong passcode.
    /// - Parameter loginPassword: the password the user logged in or unlocked the screen with.
    /// - Returns: the daemon's status.
    /// - Throws: `APIError` (`notFound` when not linked, `authFailed`, `throttled`).
    @discardableResult
    package func unlock(loginPassword: String) throws -> DaemonStatus {
        try call("POST", Route.loginLinkUnlock, LoginUnlockRequest(password: loginPassword))
    }

    /// Tells the daemon the login password changed (`passwd` through PAM): with the old one the
    /// link follows, without it (root's `passwd USER`) the link is marked stale.
    /// - Parameters:
    ///   - old: the password before, when the change was asked with it.
    ///   - new: the password after.
    /// - Returns: the daemon's status.
    /// - Throws: `APIError` (`notFound` when not linked, `authFailed` when `old` does not open the link).
    @discardableResult
    package func loginPasswordChanged(old: String?, new: String) throws -> DaemonStatus {
        try call("POST", Route.loginLinkPasswordChanged, LoginPasswordChangedRequest(old: old, new: new))
    }

    /// Removes the login link, with the passcode; the passcode itself is untouched. For the
    /// `tresor` tool.
    /// - Parameter passcode: the keybag's passcode (checked only while a link exists).
    /// - Returns: the daemon's status.
    /// - Throws: `APIError` (`authFailed` for a wrong passcode, `throttled`) or when the daemon
    ///   cannot be reached or the keybag is damaged.
    @discardableResult
    package func unlinkLogin(passcode: String) throws -> DaemonStatus {
        try call("POST", Route.loginLinkRemove, UnlinkLoginRequest(passcode: passcode))
    }

    // MARK: Keychains

    /// Every keychain and its lock state: login, the ones created, System Roots.
    /// - Returns: login first, then the created keychains by name, then System Roots
    ///   (docs/API.md, "Created keychains").
    /// - Throws: ``TresorClientError`` when the daemon cannot be reached.
    public func keychains() throws -> [KeychainSummary] {
        let response: KeychainsResponse = try call("GET", Route.keychains)
        return response.keychains
    }

    /// Creates a keychain with its own passcode (the `tresor` CLI only).
    /// - Parameters:
    ///   - name: 1 to 64 of A-Z, a-z, 0-9, `.`, `_` or `-`, not `login`.
    ///   - passcode: its passcode; a created keychain always has one.
    /// - Returns: every keychain, the new one unlocked.
    /// - Throws: `APIError` (`param` for a bad name, `duplicateItem` for a taken one,
    ///   `notInitialized`, `missingEntitlement` for any caller but the CLI).
    @discardableResult
    public func createKeychain(name: String, passcode: String) throws -> [KeychainSummary] {
        let response: KeychainsResponse = try call("POST", Route.keychains, CreateKeychainRequest(name: name, passcode: passcode))
        return response.keychains
    }

    /// Deletes a created keychain and its items (the `tresor` CLI only).
    /// - Parameters:
    ///   - name: the keychain.
    ///   - passcode: its passcode, needed whatever its lock state.
    /// - Returns: every keychain left.
    /// - Throws: `APIError` (`authFailed` for a wrong passcode, counted on its own counter;
    ///   `noSuchKeychain`; `param` for `login`; `missingEntitlement` for any caller but the CLI).
    @discardableResult
    public func deleteKeychain(name: String, passcode: String) throws -> [KeychainSummary] {
        let response: KeychainsResponse = try call("POST", Route.deleteKeychain, DeleteKeychainRequest(name: name, passcode: passcode))
        return response.keychains
    }

    /// Removes the passcode; `whenPasscodeSetThisDeviceOnly` secrets are destroyed, and so is
    /// the login link. The login keybag only.
    /// - Parameter current: the passcode now.
    /// - Returns: the daemon's status.
    /// - Throws: `APIError` (`authFailed` for a wrong passcode, counted; `noPasscodeSet`;
    ///   `throttled`), or ``TresorClientError``.
    @discardableResult
    public func removePasscode(current: String) throws -> DaemonStatus {
        try call("POST", Route.removePasscode, RemovePasscodeRequest(current: current))
    }

    // MARK: Auto-lock holds

    /// Keeps the keybag from auto-locking while this client stays connected, for `reason`
    /// (shown in `tresor status`). The hold ends with ``releaseHold(_:)`` or when the client is
    /// released; meanwhile the daemon keeps this connection open however long it is idle.
    /// - Parameter reason: why, 1 to 200 characters without control characters.
    /// - Returns: the hold, with its id.
    /// - Throws: `APIError` (`param` for a bad reason), or ``TresorClientError``.
    public func holdAutoLock(reason: String) throws -> Hold {
        let hold: Hold = try call("POST", Route.holds, HoldRequest(reason: reason))
        connection.withLock { $0.holds += 1 }
        return hold
    }

    /// Ends an auto-lock hold made with ``holdAutoLock(reason:)``.
    /// - Parameter hold: The hold to end.
    /// - Throws: `APIError` (`notFound` when it ended already).
    public func releaseHold(_ hold: Hold) throws {
        defer { connection.withLock { $0.holds = max(0, $0.holds - 1) } }
        try callExpectingNoContent("DELETE", Route.holds + "/" + hold.id)
    }

    /// The daemon's view of its own environment (tracer, core dumps, uid…).
    /// - Returns: its findings, as `tresor doctor` shows them.
    /// - Throws: ``TresorClientError`` when the daemon cannot be reached.
    public func doctor() throws -> DoctorReport { try call("GET", Route.doctor) }

    // MARK: Transport

    func callExpectingNoContent(_ method: String, _ path: String) throws {
        _ = try callRaw(method, path)
    }

    /// A request with a JSON body and no answer body (`204`).
    func callExpectingNoContent<Body: Encodable>(_ method: String, _ path: String, _ body: Body) throws {
        let body = try encoder.encode(body)
        _ = try succeeded(send { try $0.send(method: method, path: path, body: body) })
    }

    /// A request with raw bytes in either direction (attachments): the answer as it came,
    /// once its status says success.
    func callRaw(
        _ method: String, _ path: String, body: Data, contentType: String, headers: [(String, String)] = []
    ) throws -> UnixSocketHTTP.Response {
        try succeeded(send { try $0.send(method: method, path: path, body: body, contentType: contentType, headers: headers) })
    }

    /// A request whose body is `length` bytes of the open file `file`, sent a piece at a time;
    /// the answer as it came, once its status says success.
    func callRaw(
        _ method: String, _ path: String, file: Int32, length: Int, fileName: String, contentType: String, headers: [(String, String)]
    ) throws -> UnixSocketHTTP.Response {
        try succeeded(
            send {
                try $0.send(method: method, path: path, file: file, length: length, fileName: fileName, contentType: contentType, headers: headers)
            })
    }

    /// A request with a JSON body whose answer's raw bytes, once its status says success, go to
    /// `receive` a piece at a time as they arrive; the answer returned has its head only.
    func callRaw(
        _ method: String, _ path: String, body: Data, receive: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> UnixSocketHTTP.Response {
        try succeeded(send { try $0.send(method: method, path: path, body: body, contentType: "application/json", receive: receive) })
    }

    /// A request without a body whose answer is raw bytes, once its status says success.
    func callRaw(_ method: String, _ path: String) throws -> UnixSocketHTTP.Response {
        try succeeded(send { try $0.send(method: method, path: path, body: nil) })
    }

    /// Runs one exchange on the connection, with no other in between.
    private func send(_ exchange: (UnixSocketHTTP) throws -> UnixSocketHTTP.Response) throws -> UnixSocketHTTP.Response {
        try connection.withLock { connection in
            // Sent now, the request could cross the daemon closing the connection as idle.
            if connection.holds == 0, connection.http.mayBeClosedByDaemon {
                connection.http = try UnixSocketHTTP(path: paths.socket.path, timeout: timeout)
            }
            return try exchange(connection.http)
        }
    }

    /// Decodes a JSON answer already received.
    func decoded<Response: Decodable>(_ response: UnixSocketHTTP.Response) throws -> Response { try decode(response) }

    func call<Response: Decodable>(_ method: String, _ path: String) throws -> Response {
        try decode(send { try $0.send(method: method, path: path, body: nil) })
    }

    func call<Body: Encodable, Response: Decodable>(_ method: String, _ path: String, _ body: Body?) throws -> Response {
        let body = try body.map { try encoder.encode($0) }
        return try decode(send { try $0.send(method: method, path: path, body: body) })
    }

    private func decode<Response: Decodable>(_ response: UnixSocketHTTP.Response) throws -> Response {
        let response = try succeeded(response)
        do {
            return try decoder.decode(Response.self, from: response.body)
        } catch {
            throw TresorClientError.protocolError("response to a \(Response.self) request is not the documented JSON")
        }
    }

    /// `response` if its status says success; else the daemon's error.
    private func succeeded(_ response: UnixSocketHTTP.Response) throws -> UnixSocketHTTP.Response {
        guard (200..<300).contains(response.status) else { throw apiError(response) }
        return response
    }

    private func apiError(_ response: UnixSocketHTTP.Response) -> Error {
        if let body = try? decoder.decode(ErrorResponse.self, from: response.body) { return body.error }
        return TresorClientError.protocolError("HTTP status \(response.status) without an error body")
    }
}
