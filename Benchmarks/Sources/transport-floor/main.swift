// transport-floor hummingbird|nio SOCKET
// transport-floor keychain SOCKET HOME      (the passcode on standard input)
//
// The smallest HTTP servers on a Unix socket, answering every request with `{}`: what a
// request costs before any of Tresor's middleware, routing or handlers (BENCHMARKS.md §1).
// `hummingbird` is the daemon's server with one route; `nio` is SwiftNIO's HTTP/1 pipeline
// with one synchronous handler on the event loop (no Swift concurrency in the path).
// `keychain` is `nio` answering `GET /<account>` with that item's secret, looked up in HOME's
// login keychain in the handler: a lookup's floor with any protocol on this socket — the
// transport and the keychain, and nothing else (no JSON, no caller identity, no router).
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import TresorKeybag
import TresorKeychain

import struct TresorKit.TresorPaths

let arguments = CommandLine.arguments
guard arguments.count == 3 && ["hummingbird", "nio"].contains(arguments[1]) || arguments.count == 4 && arguments[1] == "keychain" else {
    print("usage: transport-floor hummingbird|nio SOCKET | transport-floor keychain SOCKET HOME")
    exit(2)
}
let path = arguments[2]

/// Answers each request with a fixed JSON body once the request has arrived whole.
final class FixedResponder: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    private let body = ByteBuffer(string: "{}")

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        var head = HTTPResponseHead(version: .http1_1, status: .ok)
        head.headers.add(name: "Content-Type", value: "application/json")
        head.headers.add(name: "Content-Length", value: "2")
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

/// Answers `GET /<account>` with the secret of the bench's generic password for that account.
final class KeychainResponder: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    let keychain: KeychainStore
    let caller = Caller(accessGroups: ["BENCH.bench"], defaultAccessGroup: "BENCH.bench")
    private var account = ""

    init(keychain: KeychainStore) { self.keychain = keychain }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): account = String(head.uri.dropFirst())
        case .body: break
        case .end:
            var query = ItemQuery.genericPassword(service: "bench", account: account)
            (query.limit, query.returnData, query.returnAttributes) = (.one, true, false)
            let secret = (try? keychain.copyMatchingFromIndex(query, caller: caller))??.first?.secret ?? Data()
            var head = HTTPResponseHead(version: .http1_1, status: secret.isEmpty ? .notFound : .ok)
            head.headers.add(name: "Content-Length", value: String(secret.count))
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: secret)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}

switch arguments[1] {
case "keychain":
    let paths = TresorPaths(home: arguments[3], environment: ProcessInfo.processInfo.environment)
    let keybag = try Keybag.open(paths: paths)
    let passcode = readLine(strippingNewline: true) ?? ""
    try keybag.unlock(passcode: try Passcode(passcode))
    let keychain = try KeychainStore(file: paths.loginKeychain, keybag: keybag)
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                try channel.pipeline.syncOperations.addHandler(KeychainResponder(keychain: keychain))
            }
        }
        .bind(unixDomainSocketPath: path).get()
    try await channel.closeFuture.get()
case "hummingbird":
    let router = Router()
    router.get("/v1/status") { _, _ -> String in "{}" }
    let app = Application(router: router, configuration: .init(address: .unixDomainSocket(path: path)), logger: Logger(label: "floor"))
    try await app.runService()
default:
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                try channel.pipeline.syncOperations.addHandler(FixedResponder())
            }
        }
        .bind(unixDomainSocketPath: path).get()
    try await channel.closeFuture.get()
}
