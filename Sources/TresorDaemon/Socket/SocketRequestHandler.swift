import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import TresorProtocol

/// Reads one HTTP request at a time from a socket connection, has the router answer it in a
/// task on the connection's event loop — or answers it at once when it is one of the
/// ``InlineRoutes`` — and writes the answer back with a `Content-Length`. An answer larger
/// than ``streamedAnswerBytes`` (an attachment) is written as its route produces it, each part
/// once the one before is on the socket: the daemon holds a part or two of it, never all of it.
///
/// A request's body is read whole before the router sees it, up to the route's limit
/// (``RequestBodyLimits``); a larger one is answered `413 requestTooLarge` without buffering
/// it, and the rest of it is read and dropped so the connection stays usable. Routes with a
/// larger limit get their body as a stream instead, while it arrives — and the socket is read
/// no faster than the route consumes it: while more than a few parts wait, reading pauses.
final class SocketRequestHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundIn = Never
    typealias OutboundOut = HTTPServerResponsePart
    typealias BodyStream = NIOThrowingAsyncSequenceProducer<
        ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, BodyReadDelegate
    >

    private enum State {
        /// Between requests.
        case idle
        /// The body of a route with the standard limit is arriving; the router has not run.
        case collecting(HTTPRequestHead, body: ByteBuffer, limit: Int)
        /// The router runs a streamed route while its body arrives.
        case streaming(BodyStream.Source, received: Int, limit: Int)
        /// The router is answering. Until `bodyEnded`, what is left of the body (of a streamed
        /// route that went over its limit) is dropped.
        case answering(bodyEnded: Bool)
        /// The answer went out before the request's end: the rest of its body is dropped.
        case discarding
    }

    private let responder: RouterResponder<DaemonRequestContext>
    private let inline: InlineRoutes?
    private let bodyLimits: RequestBodyLimits
    /// What every request on this connection is answered with, before the connection closes.
    private let refusal: APIError?
    private let logger: Logger
    private var state = State.idle
    private var keepAlive = true
    private var executor: EventLoopTaskExecutor?
    /// A streamed body's reader has enough buffered: reads wait (``read(context:)``).
    private var readsPaused = false
    private var readPending = false

    init(
        responder: RouterResponder<DaemonRequestContext>, inline: InlineRoutes?, bodyLimits: RequestBodyLimits, refusal: APIError? = nil,
        logger: Logger
    ) {
        self.responder = responder
        self.inline = inline
        self.bodyLimits = bodyLimits
        self.refusal = refusal
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        executor = EventLoopTaskExecutor(context.eventLoop)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (unwrapInboundIn(data), state) {
        case (.head, .idle) where refusal != nil:
            keepAlive = false
            refuse(with: refusal!, context: context)
        case (.head(let head), .idle):
            keepAlive = head.isKeepAlive
            let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
            let limit = bodyLimits.limit(forPath: path)
            if let declared = head.headers.first(name: "content-length").flatMap(Int.init), declared > limit.bytes {
                return refuse(with: Self.tooLarge(limit.bytes), context: context)
            }
            if limit.streamed {
                // At most 8 parts (a read is at most 64 KiB) wait for the route; it asks for more at 2.
                let body = BodyStream.makeSequence(
                    backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8), finishOnDeinit: false,
                    delegate: BodyReadDelegate(
                        handler: NIOLoopBound(self, eventLoop: context.eventLoop), context: NIOLoopBound(context, eventLoop: context.eventLoop)))
                state = .streaming(body.source, received: 0, limit: limit.bytes)
                answer(head, body: RequestBody(asyncSequence: body.sequence), context: context)
            } else {
                state = .collecting(head, body: context.channel.allocator.buffer(capacity: 0), limit: limit.bytes)
            }
        case (.body(var part), .collecting(let head, var body, let limit)):
            guard body.readableBytes + part.readableBytes <= limit else { return refuse(with: Self.tooLarge(limit), context: context) }
            state = .idle  // lets `body` be appended to without a copy
            body.writeBuffer(&part)
            state = .collecting(head, body: body, limit: limit)
        case (.body(let part), .streaming(let source, let received, let limit)):
            let received = received + part.readableBytes
            guard received <= limit else {
                // The route's own reading reports it, with its own words (`NotesRouting.collect`).
                source.finish(NIOTooManyBytesError(maxBytes: limit))
                state = .answering(bodyEnded: false)
                return resumeReading(context: context)  // the rest is read and dropped
            }
            if case .stopProducing = source.yield(part) { readsPaused = true }
            state = .streaming(source, received: received, limit: limit)
        case (.end, .collecting(let head, let body, _)):
            state = .answering(bodyEnded: true)
            if let response = inline?.answer(head, body: body, channel: context.channel) {
                return finish(response, context: context)
            }
            answer(head, body: RequestBody(buffer: body), context: context)
        case (.end, .streaming(let source, _, _)):
            source.finish()
            state = .answering(bodyEnded: true)
        case (.end, .answering):
            state = .answering(bodyEnded: true)
        case (.end, .discarding):
            state = .idle
            if !keepAlive { context.close(promise: nil) }
        case (.body, .discarding), (.body, .answering):
            break  // the rest of a body refused as too large
        case (.head, _), (.body, .idle), (.end, .idle):
            // HTTPServerPipelineHandler delivers one request at a time: this cannot happen.
            logger.error("socket API: HTTP request parts out of order; closing the connection")
            context.close(promise: nil)
        }
    }

    /// A request that is not HTTP has been answered `400` by NIO's error handler by now; after
    /// it, and after any other error, nothing more on this connection can be trusted.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !(error is HTTPParserError) {
            logger.notice("socket API: connection closed after an error", metadata: ["error": "\(type(of: error))"])
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .streaming(let source, _, _) = state {
            source.finish(ChannelError.ioOnClosedChannel)
        }
        state = .idle
        context.fireChannelInactive()
    }

    /// Runs the router for one request in a task on this connection's event loop.
    private func answer(_ head: HTTPRequestHead, body: RequestBody, context: ChannelHandlerContext) {
        guard let method = HTTPRequest.Method(head.method.rawValue) else {
            // Answered like any other request, so the connection's state moves on with it.
            return finish(ErrorMiddleware.completeResponse(for: APIError(.param, "unknown HTTP method")), context: context)
        }
        var fields = HTTPFields()
        for (name, value) in head.headers {
            if let name = HTTPFields.Element.Name(name) { fields.append(HTTPFields.Element(name: name, value: value)) }
        }
        let request = Request(
            head: HTTPRequest(method: method, scheme: nil, authority: head.headers.first(name: "host"), path: head.uri, headerFields: fields),
            body: body)
        let requestContext = DaemonRequestContext(source: ApplicationRequestContextSource(channel: context.channel, logger: logger))
        Self.startTask(
            on: executor, responder, request, requestContext,
            then: NIOLoopBound(self, eventLoop: context.eventLoop), NIOLoopBound(context, eventLoop: context.eventLoop))
    }

    private static func startTask(
        on executor: EventLoopTaskExecutor?, _ responder: RouterResponder<DaemonRequestContext>, _ request: Request,
        _ requestContext: DaemonRequestContext,
        then handler: NIOLoopBound<SocketRequestHandler>, _ channelContext: NIOLoopBound<ChannelHandlerContext>
    ) {
        Task(executorPreference: executor) {
            let response = await respond(responder, to: request, context: requestContext)
            if case .streamed(let response, let length) = response {
                return await stream(response, length: length, then: handler, channelContext)
            }
            guard case .complete(let response) = response else { return }
            // The task ran on the connection's loop (the executor); if it ever did not, hop there.
            if handler.eventLoop.inEventLoop {
                handler.value.finish(response, context: channelContext.value)
            } else {
                handler.eventLoop.execute { handler.value.finish(response, context: channelContext.value) }
            }
        }
    }

    /// The size above which an answer is written as it is produced rather than gathered first.
    static let streamedAnswerBytes = 1 << 20

    /// What the router answered: whole, or a large body still to be produced.
    private enum Answer {
        case complete(CompleteResponse)
        case streamed(Response, length: Int)
    }

    /// The router's answer; unless it declares more than ``streamedAnswerBytes``, with its body
    /// gathered so it goes out with a `Content-Length`.
    private static func respond(
        _ responder: RouterResponder<DaemonRequestContext>, to request: Request, context: DaemonRequestContext
    ) async -> Answer {
        do {
            let response = try await responder.respond(to: request, context: context)
            if let length = response.body.contentLength, length > streamedAnswerBytes { return .streamed(response, length: length) }
            let body = BodyCollector()
            try await response.body.write(body)
            return .complete(CompleteResponse(head: response.head, body: body.buffer))
        } catch {
            // `ErrorMiddleware` turns every failure of a route into an API error; this is one of its own.
            return .complete(ErrorMiddleware.completeResponse(for: ErrorMiddleware.apiError(for: error)))
        }
    }

    /// Writes `response`'s head with its declared `length`, then its body as the route produces
    /// it, each part once the one before is written. A body that fails or comes out a different
    /// length closes the connection: the client sees an answer shorter than declared, never a
    /// wrong one taken for whole.
    private static func stream(
        _ response: Response, length: Int, then handler: NIOLoopBound<SocketRequestHandler>, _ channelContext: NIOLoopBound<ChannelHandlerContext>
    ) async {
        let loop = handler.eventLoop
        let head = response.head
        let started = try? await loop.submit { handler.value.begin(head, length: length, context: channelContext.value) }.get()
        guard started == true else { return }
        let writer = SocketBodyWriter(handler: handler, context: channelContext, length: length)
        do {
            try await response.body.write(writer)
            guard writer.written == length else { throw ChannelError.outputClosed }
            try await loop.flatSubmit { handler.value.writeEnd(context: channelContext.value) }.get()
        } catch {
            loop.execute { channelContext.value.close(promise: nil) }
        }
    }

    /// Moves the connection on once an answer is ready: the rest of the request's body, if any,
    /// is dropped; whatever comes next is read. False when nothing is to be written (the
    /// connection closed, or the request was refused, meanwhile).
    private func answerReady(context: ChannelHandlerContext) -> Bool {
        switch state {
        case .answering(let bodyEnded):
            state = bodyEnded ? .idle : .discarding
        case .streaming(let source, _, _):
            // Answered before its body ended (a refusal): drop the rest of the body.
            source.finish()
            state = .discarding
        case .idle, .collecting, .discarding:
            return false
        }
        // Whatever comes next — the rest of a refused body, the next request — is read.
        resumeReading(context: context)
        return true
    }

    private func finish(_ response: CompleteResponse, context: ChannelHandlerContext) {
        guard answerReady(context: context) else { return }
        write(response, context: context)
    }

    /// Starts a streamed answer: its head, with the length its body will have.
    fileprivate func begin(_ head: HTTPResponse, length: Int, context: ChannelHandlerContext) -> Bool {
        guard answerReady(context: context) else { return false }
        context.write(wrapOutboundOut(.head(responseHead(head, contentLength: length))), promise: nil)
        return true
    }

    /// Writes a part of a streamed answer's body; done once it is on the socket.
    fileprivate func writeBody(_ part: ByteBuffer, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(part))))
    }

    /// Holds a read back while a streamed body's reader has enough waiting.
    func read(context: ChannelHandlerContext) {
        if readsPaused { readPending = true } else { context.read() }
    }

    /// The reader wants more (or is gone): let the held-back read happen.
    fileprivate func resumeReading(context: ChannelHandlerContext) {
        guard readsPaused else { return }
        readsPaused = false
        if readPending {
            readPending = false
            context.read()
        }
    }

    /// Answers the request with `error` before its body is read; the rest of it is dropped.
    private func refuse(with error: APIError, context: ChannelHandlerContext) {
        state = .discarding
        write(ErrorMiddleware.completeResponse(for: error), context: context)
    }

    private static func tooLarge(_ limit: Int) -> APIError {
        APIError(.requestTooLarge, "the request is larger than \(limit) bytes")
    }

    private func write(_ response: CompleteResponse, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(responseHead(response.head, contentLength: response.body.readableBytes))), promise: nil)
        if response.body.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(response.body))), promise: nil) }
        _ = writeEnd(context: context)
    }

    /// The head of an answer whose body is `contentLength` bytes.
    private func responseHead(_ response: HTTPResponse, contentLength: Int) -> HTTPResponseHead {
        var head = HTTPResponseHead(
            version: .http1_1, status: HTTPResponseStatus(statusCode: response.status.code, reasonPhrase: response.status.reasonPhrase))
        for field in response.headerFields where field.name != .contentLength && field.name != .transferEncoding {
            head.headers.add(name: field.name.rawName, value: field.value)
        }
        head.headers.add(name: "Content-Length", value: String(contentLength))
        if !keepAlive { head.headers.add(name: "Connection", value: "close") }
        return head
    }

    /// Ends an answer; closes the connection after it when the client asked to.
    fileprivate func writeEnd(context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        // A refused request's end is still to come (``State/discarding``): close once it is read.
        if !keepAlive, case .idle = state {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        }
        return written
    }
}

/// Gathers a response body: one buffer kept as it is, several joined.
private final class BodyCollector: ResponseBodyWriter {
    var buffer = ByteBuffer()

    func write(_ part: ByteBuffer) async throws {
        if buffer.readableBytes == 0 { buffer = part } else { var part = part; buffer.writeBuffer(&part) }
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}

/// Tells the handler, on its event loop, that a streamed body's reader wants more parts, or has
/// stopped reading (then the rest of the body is read and dropped).
struct BodyReadDelegate: NIOAsyncSequenceProducerDelegate {
    let handler: NIOLoopBound<SocketRequestHandler>
    let context: NIOLoopBound<ChannelHandlerContext>

    func produceMore() {
        let (handler, context) = (handler, context)
        handler.eventLoop.execute { handler.value.resumeReading(context: context.value) }
    }

    func didTerminate() {
        produceMore()
    }
}

/// Writes a streamed answer's body to its connection a part at a time, each once the one before
/// is on the socket, so a client that reads slowly slows the route rather than filling memory.
/// The route calls it from one task, one part after another.
private final class SocketBodyWriter: ResponseBodyWriter, @unchecked Sendable {
    let handler: NIOLoopBound<SocketRequestHandler>
    let context: NIOLoopBound<ChannelHandlerContext>
    /// The length the answer's head declared: a byte more would be taken for the next answer.
    let length: Int
    /// Bytes written so far.
    private(set) var written = 0

    init(handler: NIOLoopBound<SocketRequestHandler>, context: NIOLoopBound<ChannelHandlerContext>, length: Int) {
        self.handler = handler
        self.context = context
        self.length = length
    }

    func write(_ part: ByteBuffer) async throws {
        guard written + part.readableBytes <= length else { throw ChannelError.outputClosed }
        written += part.readableBytes
        let (handler, context) = (handler, context)
        try await handler.eventLoop.flatSubmit { handler.value.writeBody(part, context: context.value) }.get()
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
