// transport-floor hummingbird|nio SOCKET
//
// The smallest HTTP servers on a Unix socket, answering every request with `{}`: what a
// request costs before any of Tresor's middleware, routing or handlers (BENCHMARKS.md §1).
// `hummingbird` is the daemon's server with one route; `nio` is SwiftNIO's HTTP/1 pipeline
// with one synchronous handler on the event loop (no Swift concurrency in the path).
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

let arguments = CommandLine.arguments
guard arguments.count == 3, ["hummingbird", "nio"].contains(arguments[1]) else {
    print("usage: transport-floor hummingbird|nio SOCKET")
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

switch arguments[1] {
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
