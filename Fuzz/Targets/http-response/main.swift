// Fuzzes the CLI client's HTTP/1.1 response parser (TresorKit's internal UnixSocketHTTP:
// status line, headers, Content-Length and chunked bodies, keep-alive) and the JSON decoding of
// the responses, through the public TresorClient: the harness is the "daemon", listening on
// the home's socket and answering with the fuzz input.
//
// Each input is served on a fresh connection, already whole in the socket when the client
// reads, then the write side is shut: a response the parser thinks incomplete ends in
// "connection closed", not in a hang. Two calls are made in turn on the same connection, so
// bytes after the first response are the second's (keep-alive).
//
// Input: selector byte (which two client calls) | the bytes the daemon sends
import Foundation
import FuzzSupport
import TresorKit
import TresorProtocol

#if canImport(Glibc)
import Glibc
#endif

let home = makeScratchFolder("http")
let paths = TresorPaths(home: home.path, environment: [:])

/// The listening socket at `paths.socket`, as tresord makes it.
let listener: Int32 = {
    try? FileManager.default.createDirectory(at: paths.runtimeDirectory, withIntermediateDirectories: true)
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let path = Array(paths.socket.path.utf8)
    precondition(fd >= 0 && path.count < MemoryLayout.size(ofValue: address.sun_path), "cannot make the socket")
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: path)
        raw[path.count] = 0
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    precondition(bound == 0 && listen(fd, 16) == 0, "cannot listen on \(paths.socket.path) (errno \(errno))")
    return fd
}()

let hold = Hold(
    id: "h-1", reason: "fuzz", client: ClientDescription(pid: 1, uid: 0, executable: "/bin/true", executableSHA256: ""), since: 0)
let query = ItemQuery(.genericPassword, attributes: ItemAttributes(), limit: .all)

/// The client calls a selector can pick: every response type the client decodes.
let calls: [(TresorClient) throws -> Void] = [
    { _ = try $0.status() },
    { _ = try $0.keychains() },
    { _ = try $0.holdAutoLock(reason: "fuzz") },
    { try $0.releaseHold(hold) },
    { _ = try $0.doctor() },
    { _ = try Keychain(client: $0).items(query) },
    { _ = try $0.applications() },
    { _ = try Keychain(client: $0).delete(query) },
]

/// The socket buffer must hold a whole input (the harness writes it before the client reads).
let maximumInput = 48 * 1024

func seeds() -> [String: Data] {
    func response(_ status: String, _ body: String, headers: [String] = ["Content-Type: application/json; charset=utf-8"]) -> String {
        "HTTP/1.1 \(status)\r\n"
            + (headers + ["Content-Length: \(body.utf8.count)", "Date: Sun, 22 Nov 2026 09:00:00 GMT"])
            .map { $0 + "\r\n" }.joined() + "\r\n" + body
    }
    func chunked(_ status: String, _ chunks: [String]) -> String {
        "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            + chunks.map { String($0.utf8.count, radix: 16) + "\r\n" + $0 + "\r\n" }.joined() + "0\r\n\r\n"
    }
    let status =
        #"{"apiVersion":1,"autoLockSeconds":300,"availableClasses":["always","alwaysThisDeviceOnly"],"daemonVersion":"0.1.0","failedAttempts":0,"holds":[{"client":{"executable":"/usr/bin/tresor","executableSHA256":"00","pid":42,"uid":1000},"id":"h-1","reason":"backup","since":1700000000}],"home":"/home/ada/.local/share/tresor","idleSeconds":3,"keybag":"locked","keychains":[{"name":"work","passcodeSet":true,"state":"locked"}],"passcodeSet":true,"pid":4242}"#
    let keychains =
        #"{"keychains":[{"name":"login","passcodeSet":true,"state":"unlocked"},{"name":"System Roots","passcodeSet":false,"state":"readOnly"}]}"#
    let holdBody = #"{"client":{"executable":"/usr/bin/tresor","executableSHA256":"ab","pid":7,"uid":1000},"id":"h-2","reason":"fuzz","since":1.5}"#
    let items =
        #"{"items":[{"attributes":{"account":"ada","service":"github.com","synchronizable":false},"id":"5214","itemClass":"genp","secret":"czNjcjN0"}]}"#
    let error = #"{"error":{"code":"throttled","message":"wait","retryAfterSeconds":60}}"#
    let unknownError = #"{"error":{"code":"somethingNew","message":"from a newer daemon"}}"#
    let seeds: [(String, UInt8, String)] = [
        ("status", 0, response("200 OK", status)),
        ("status-chunked", 0, chunked("200 OK", [String(status.prefix(100)), String(status.dropFirst(100))])),
        ("status-chunk-extension", 0, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;name=value\r\n{}\r\n0\r\nTrailer: x\r\n\r\n"),
        ("keychains-then-status", 1 | 0 << 3, response("200 OK", keychains) + response("200 OK", status)),
        ("hold-then-release", 2 | 3 << 3, response("200 OK", holdBody) + response("204 No Content", "", headers: [])),
        ("release-no-length", 3, "HTTP/1.1 204 No Content\r\n\r\n"),
        ("doctor-error", 4, response("503 Service Unavailable", error)),
        ("items", 5, response("200 OK", items)),
        ("apps-unknown-error", 6, response("400 Bad Request", unknownError)),
        ("count", 7 | 7 << 3, response("200 OK", #"{"count":3}"#) + response("200 OK", #"{"count":-1}"#)),
        ("http10-lf-only", 0, "HTTP/1.0 200 OK\nContent-Length: 2\n\n{}"),
        ("no-reason-phrase", 1, "HTTP/1.1 200\r\nContent-Length: 15\r\n\r\n{\"keychains\":[]"),
        ("header-without-colon", 5, "HTTP/1.1 200 OK\r\nweird header\r\ncontent-length:  12 \r\n\r\n{\"items\":[]}"),
        ("bad-status-line", 0, "HTTP/2 200 OK\r\n\r\n"),
    ]
    var result: [String: Data] = [:]
    for (name, selector, bytes) in seeds { result[name] = Data([selector]) + Data(bytes.utf8) }
    return result
}

fuzz(seeds: seeds) { data in
    var input = FuzzInput(data)
    let selector = Int(input.byte())
    let bytes = Data(input.rest.prefix(maximumInput))

    let client: TresorClient
    do {
        client = try TresorClient.connect(paths: paths, startDaemon: false)
    } catch {
        fatalError("cannot connect to the harness's own socket: \(error)")
    }
    let server = accept(listener, nil, nil)
    precondition(server >= 0, "accept failed (errno \(errno))")
    defer { close(server) }
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let sent = send(server, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            precondition(sent > 0, "cannot write the response (errno \(errno))")
            offset += sent
        }
    }
    shutdown(server, Int32(SHUT_WR))

    for call in [calls[selector % calls.count], calls[(selector >> 3) % calls.count]] {
        do {
            try call(client)
        } catch {
            // Any error is a fine answer to a bad response; only crashes and hangs are bugs.
        }
    }
}
